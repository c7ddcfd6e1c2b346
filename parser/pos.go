package parser

// Position methods of the nodes that are parts of statements rather than statements or
// expressions, so that errors can point at them too.

func (n *Query) Position() Pos        { return n.Pos }
func (n *SelectItem) Position() Pos   { return n.Pos }
func (n *ColumnDef) Position() Pos    { return n.Pos }
func (n *TypeName) Position() Pos     { return n.Pos }
func (n *RowField) Position() Pos     { return n.Pos }
func (n *WatermarkDef) Position() Pos { return n.Pos }
func (n *Option) Position() Pos       { return n.Pos }
func (n *WhenClause) Position() Pos   { return n.Pos }
func (n *CTE) Position() Pos          { return n.Pos }
func (n LikeOption) Position() Pos    { return n.Pos }
func (n *LikeClause) Position() Pos   { return n.Pos }
