package planner

// EditDistance is the Levenshtein distance between a and b, for did-you-mean hints
// outside the planner (option and setting keys).
func EditDistance(a, b string) int { return editDistance(a, b) }
