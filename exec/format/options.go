package format

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// CSVOptions are the options of Flink's csv format (WITH keys prefixed csv.).
type CSVOptions struct {
	FieldDelimiter    byte   // csv.field-delimiter, default ','
	QuoteCharacter    byte   // csv.quote-character, default '"'; 0 when csv.disable-quote-character
	AllowComments     bool   // csv.allow-comments: skip lines starting with '#'
	NullLiteral       string // csv.null-literal: an unquoted field equal to it is NULL
	HasNullLiteral    bool   // whether csv.null-literal was given
	IgnoreParseErrors bool   // csv.ignore-parse-errors: skip bad records instead of failing
	// Location is the session time zone: TIMESTAMP_LTZ text is a wall clock there, and
	// encoders print TIMESTAMP_LTZ in it. Nil means UTC.
	Location *time.Location
}

// DefaultCSVOptions returns Flink's defaults.
func DefaultCSVOptions() CSVOptions {
	return CSVOptions{FieldDelimiter: ',', QuoteCharacter: '"'}
}

// JSONOptions are the options of Flink's json format (WITH keys prefixed json.).
type JSONOptions struct {
	FailOnMissingField bool // json.fail-on-missing-field: a missing field is an error, not NULL
	IgnoreParseErrors  bool // json.ignore-parse-errors: skip bad records instead of failing
	// TimestampISO8601 is json.timestamp-format.standard = 'ISO-8601': encoders write
	// 2019-01-17T09:43:19.000 (and a Z for TIMESTAMP_LTZ) instead of the SQL form.
	// Decoders accept both forms either way.
	TimestampISO8601 bool
	Location         *time.Location // session time zone, as in CSVOptions; nil means UTC
}

var (
	csvOptionKeys = []string{"csv.allow-comments", "csv.disable-quote-character", "csv.field-delimiter",
		"csv.ignore-parse-errors", "csv.null-literal", "csv.quote-character"}
	jsonOptionKeys = []string{"json.fail-on-missing-field", "json.ignore-parse-errors",
		"json.timestamp-format.standard"}
)

// Formats lists the supported format names.
func Formats() []string { return []string{"csv", "json", Debezium, Canal, Maxwell, Raw} }

// OptionKeys returns the WITH option keys of a format, sorted, and whether the format
// exists.
func OptionKeys(format string) ([]string, bool) {
	switch format {
	case "csv":
		return csvOptionKeys, true
	case "json":
		return jsonOptionKeys, true
	case Debezium, Canal, Maxwell:
		keys := changelogOptionKeys(format)
		sort.Strings(keys)
		return keys, true
	case Raw:
		return rawOptionKeys, true
	}
	return nil, false
}

// ParseCSVOptions reads the csv.* keys of opts (other keys are ignored) over the
// defaults. Errors name the option and are one sentence.
func ParseCSVOptions(opts map[string]string) (CSVOptions, error) {
	o := DefaultCSVOptions()
	var err error
	if v, ok := opts["csv.field-delimiter"]; ok {
		if o.FieldDelimiter, err = optionChar("csv.field-delimiter", v); err != nil {
			return o, err
		}
	}
	if v, ok := opts["csv.quote-character"]; ok {
		if o.QuoteCharacter, err = optionChar("csv.quote-character", v); err != nil {
			return o, err
		}
	}
	if v, ok := opts["csv.disable-quote-character"]; ok {
		disable, err := optionBool("csv.disable-quote-character", v)
		if err != nil {
			return o, err
		}
		if disable {
			o.QuoteCharacter = 0
		}
	}
	if v, ok := opts["csv.allow-comments"]; ok {
		if o.AllowComments, err = optionBool("csv.allow-comments", v); err != nil {
			return o, err
		}
	}
	if v, ok := opts["csv.ignore-parse-errors"]; ok {
		if o.IgnoreParseErrors, err = optionBool("csv.ignore-parse-errors", v); err != nil {
			return o, err
		}
	}
	if v, ok := opts["csv.null-literal"]; ok {
		o.NullLiteral, o.HasNullLiteral = v, true
	}
	if o.FieldDelimiter == o.QuoteCharacter {
		return o, fmt.Errorf("options 'csv.field-delimiter' and 'csv.quote-character' must differ")
	}
	return o, nil
}

// ParseJSONOptions reads the json.* keys of opts (other keys are ignored).
func ParseJSONOptions(opts map[string]string) (JSONOptions, error) {
	var o JSONOptions
	var err error
	if v, ok := opts["json.fail-on-missing-field"]; ok {
		if o.FailOnMissingField, err = optionBool("json.fail-on-missing-field", v); err != nil {
			return o, err
		}
	}
	if v, ok := opts["json.ignore-parse-errors"]; ok {
		if o.IgnoreParseErrors, err = optionBool("json.ignore-parse-errors", v); err != nil {
			return o, err
		}
	}
	if o.FailOnMissingField && o.IgnoreParseErrors {
		return o, fmt.Errorf("options 'json.fail-on-missing-field' and 'json.ignore-parse-errors' cannot both be true")
	}
	if v, ok := opts["json.timestamp-format.standard"]; ok {
		switch strings.ToUpper(v) {
		case "SQL":
		case "ISO-8601":
			o.TimestampISO8601 = true
		default:
			return o, fmt.Errorf("option 'json.timestamp-format.standard' must be 'SQL' or 'ISO-8601', got %q", v)
		}
	}
	return o, nil
}

func optionBool(key, v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("option '%s' must be true or false, got %q", key, v)
}

// optionChar reads a one-character option; `\t` stands for a tab, as in Flink.
func optionChar(key, v string) (byte, error) {
	switch v {
	case `\t`:
		return '\t', nil
	case `\\`:
		return '\\', nil
	}
	if len(v) != 1 || v[0] == '\n' || v[0] == '\r' || v[0] >= 0x80 {
		return 0, fmt.Errorf("option '%s' must be a single ASCII character other than a line break, got %q", key, v)
	}
	return v[0], nil
}
