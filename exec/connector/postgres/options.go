package postgres

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/planner"
)

// Delivery guarantees, as 'sink.delivery-guarantee' names them.
const (
	guaranteeNone        = "none"
	guaranteeAtLeastOnce = "at-least-once"
	guaranteeExactlyOnce = "exactly-once"
)

// optionKeys are the options of Flink's JDBC sink that the connector accepts. 'driver'
// and 'sink.parallelism' are accepted so that Flink scripts run unchanged, and ignored:
// the sink runs with its input's parallelism.
var optionKeys = []string{
	"url", "table-name", "username", "password", "driver",
	"sink.buffer-flush.max-rows", "sink.buffer-flush.interval", "sink.max-retries",
	"sink.parallelism", "sink.delivery-guarantee", "connection.max-retry-timeout",
}

// config is a sink's checked options.
type config struct {
	conn           *pgx.ConnConfig
	table          string // the target table, quoted for SQL
	tableName      string // 'table-name' as written, for messages
	maxRows        int    // flush when this many rows wait; 0: no size trigger
	interval       time.Duration
	maxRetries     int
	guarantee      string
	connectTimeout time.Duration // bounds connecting: 'connection.max-retry-timeout'
}

func parseOptions(t *planner.Table) (*config, error) {
	o, err := connector.NewOptions(t, optionKeys, false, nil)
	if err != nil {
		return nil, err
	}
	rawURL, err := o.Required("url")
	if err != nil {
		return nil, err
	}
	name, err := o.Required("table-name")
	if err != nil {
		return nil, err
	}
	c := &config{table: quoteTable(name), tableName: name}
	connURL, err := translateURL(rawURL)
	if err != nil {
		return nil, o.Err("option 'url': %s", redact(err.Error(), rawURL, t.Options["password"]))
	}
	if c.conn, err = pgx.ParseConfig(connURL); err != nil {
		return nil, o.Err("option 'url': %s", redact(err.Error(), rawURL, t.Options["password"]))
	}
	if v, ok := t.Option("username"); ok {
		c.conn.User = v
	}
	if v, ok := t.Option("password"); ok {
		c.conn.Password = v
	}
	maxRows, err := o.Int64("sink.buffer-flush.max-rows", 1000, 0, 1<<24)
	if err != nil {
		return nil, err
	}
	c.maxRows = int(maxRows)
	if c.interval, err = o.Duration("sink.buffer-flush.interval", time.Second); err != nil {
		return nil, err
	}
	retries, err := o.Int64("sink.max-retries", 3, 0, 100)
	if err != nil {
		return nil, err
	}
	c.maxRetries = int(retries)
	if _, err := o.Int64("sink.parallelism", 1, 1, 1<<16); err != nil {
		return nil, err
	}
	if c.connectTimeout, err = o.Duration("connection.max-retry-timeout", time.Minute); err != nil {
		return nil, err
	}
	if c.guarantee, err = guarantee(t); err != nil {
		return nil, o.Err("%v", err)
	}
	return c, nil
}

// guarantee reads 'sink.delivery-guarantee'.
func guarantee(t *planner.Table) (string, error) {
	v, ok := t.Option("sink.delivery-guarantee")
	if !ok {
		return guaranteeAtLeastOnce, nil
	}
	switch g := strings.ToLower(strings.TrimSpace(v)); g {
	case guaranteeNone, guaranteeAtLeastOnce, guaranteeExactlyOnce:
		return g, nil
	}
	return "", fmt.Errorf("option 'sink.delivery-guarantee' must be 'none', 'at-least-once' or 'exactly-once', got %q", v)
}

// jdbcParams maps the parameters of a jdbc:postgresql:// url that libpq knows under
// another name; the JDBC driver's other parameters (reWriteBatchedInserts,
// prepareThreshold, ...) tune the driver itself and are dropped.
var jdbcParams = map[string]string{
	"user": "user", "password": "password", "sslmode": "sslmode", "sslcert": "sslcert",
	"sslkey": "sslkey", "sslrootcert": "sslrootcert", "sslpassword": "sslpassword",
	"currentSchema": "search_path", "ApplicationName": "application_name",
	"connectTimeout": "connect_timeout", "options": "options",
}

// translateURL accepts postgres:// and postgresql:// urls as they are, and turns
// Flink's jdbc:postgresql://host:port/db?user=...&ssl=true into the libpq form.
func translateURL(s string) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case strings.HasPrefix(s, "postgres://"), strings.HasPrefix(s, "postgresql://"):
		return s, nil
	case !strings.HasPrefix(s, "jdbc:"):
		return "", fmt.Errorf("expected a postgres://, postgresql:// or jdbc:postgresql:// url, got %q", s)
	}
	rest, ok := strings.CutPrefix(s, "jdbc:postgresql:")
	if !ok {
		return "", fmt.Errorf("only PostgreSQL is supported: expected jdbc:postgresql://, got %q", s)
	}
	if !strings.HasPrefix(rest, "//") { // jdbc:postgresql:database
		rest = "//localhost/" + strings.TrimPrefix(rest, "/")
	}
	u, err := url.Parse("postgresql:" + rest)
	if err != nil {
		return "", err
	}
	in := u.Query()
	out := url.Values{}
	for k, vs := range in {
		if to, ok := jdbcParams[k]; ok {
			out[to] = vs
		}
	}
	if in.Get("ssl") == "true" && out.Get("sslmode") == "" {
		out.Set("sslmode", "require")
	}
	if in.Get("ssl") == "false" && out.Get("sslmode") == "" {
		out.Set("sslmode", "disable")
	}
	u.RawQuery = out.Encode()
	return u.String(), nil
}

// urlPassword finds the password of a url: user:password@ or password=.
var urlPassword = regexp.MustCompile(`://[^:/@?#]*:([^@/?#]+)@|[?&]password=([^&#]+)`)

// redact replaces in msg every secret of rawURL, and the 'password' option, by
// ******: no message shows a password.
func redact(msg, rawURL, password string) string {
	secrets := []string{password}
	for _, m := range urlPassword.FindAllStringSubmatch(rawURL, -1) {
		secrets = append(secrets, m[1], m[2])
		if u, err := url.QueryUnescape(m[1] + m[2]); err == nil {
			secrets = append(secrets, u)
		}
	}
	for _, s := range secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "******")
		}
	}
	return msg
}

// quoteIdent quotes a name as Flink's PostgreSQL dialect writes it, unquoted, means: a
// plain name folds to lower case; any other name is quoted as is.
func quoteIdent(name string) string {
	plain := name != ""
	for i, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && (r >= '0' && r <= '9' || r == '$')) {
			plain = false
			break
		}
	}
	if plain {
		name = strings.ToLower(name)
	}
	return pgx.Identifier{name}.Sanitize()
}

// quoteTable quotes 'table-name': schema.table parts are quoted one by one; a name
// that already has quotes is used as written.
func quoteTable(name string) string {
	if strings.Contains(name, `"`) {
		return name
	}
	parts := strings.Split(name, ".")
	for i, p := range parts {
		parts[i] = quoteIdent(p)
	}
	return strings.Join(parts, ".")
}
