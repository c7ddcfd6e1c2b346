package nexmark

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/planner"
)

// Source is the nexmark connector: replayable, parallel and rescalable.
var Source = connector.SourceConnector{Open: open, Replayable: true, Parallel: true, Rescale: rescale,
	Bounded: func(t *planner.Table) bool { n, ok := t.Option("events.num"); return ok && n != "0" }}

// Option keys: Flink's nexmark connector's, plus 'table' and 'base-time'.
var keys = []string{
	"auction.proportion", "base-time", "bid.proportion", "events.num",
	"first-event.rate", "next-event.rate", "person.proportion", "table",
}

// defaultBaseTime is Beam's fixed base time, which keeps runs reproducible.
var defaultBaseTime = time.Date(2015, 7, 15, 0, 0, 0, 0, time.UTC)

// options are a table's generator settings.
type options struct {
	cfg    config
	events int64 // events in all; -1 unbounded
	shape  int   // shapeEvents or an event type: the rows of a plain table
}

const shapeEvents = -1

func parseOptions(t *planner.Table) (options, error) {
	o, err := connector.NewOptions(t, keys, false, nil)
	if err != nil {
		return options{}, err
	}
	var opts options
	// 'events.num' = '0' is Flink's unbounded.
	n, err := o.Int64("events.num", 0, 0, math.MaxInt64/2)
	if err != nil {
		return options{}, err
	}
	opts.events = n
	if n == 0 {
		opts.events = -1
	}
	rate, err := o.Int64("first-event.rate", 10000, 1, 1_000_000_000_000)
	if err != nil {
		return options{}, err
	}
	next, err := o.Int64("next-event.rate", rate, 1, 1_000_000_000_000)
	if err != nil {
		return options{}, err
	}
	if next != rate {
		return options{}, o.Err("option 'next-event.rate' (%d) must equal 'first-event.rate' (%d): rate shapes are not supported", next, rate)
	}
	opts.cfg.rate = uint64(rate)
	for _, p := range []struct {
		key string
		def int64
		to  *int64
	}{{"person.proportion", 1, &opts.cfg.person}, {"auction.proportion", 3, &opts.cfg.auction}, {"bid.proportion", 46, &opts.cfg.bid}} {
		if *p.to, err = o.Int64(p.key, p.def, 0, 1_000_000); err != nil {
			return options{}, err
		}
	}
	c := &opts.cfg
	c.total = c.person + c.auction + c.bid
	switch {
	case c.total == 0:
		return options{}, o.Err("options 'person.proportion', 'auction.proportion' and 'bid.proportion' are all 0")
	case c.person == 0 && c.auction+c.bid > 0:
		return options{}, o.Err("option 'person.proportion' must be at least 1: auctions and bids need persons")
	case c.auction == 0 && c.bid > 0:
		return options{}, o.Err("option 'auction.proportion' must be at least 1: bids need auctions")
	}
	base := defaultBaseTime
	if v, ok := t.Option("base-time"); ok {
		if base, err = parseTime(v); err != nil {
			return options{}, o.Err("option 'base-time' must be a time 'yyyy-MM-dd HH:mm:ss[.SSS]' (UTC) or epoch milliseconds, got %q", v)
		}
	}
	c.baseTime = base.UnixMilli()
	opts.shape = shapeEvents
	if v, ok := t.Option("table"); ok {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "events":
		case "person":
			opts.shape = Person
		case "auction":
			opts.shape = Auction
		case "bid":
			opts.shape = Bid
		default:
			return options{}, o.Err("option 'table' must be 'events', 'person', 'auction' or 'bid', got %q", v)
		}
	}
	return opts, nil
}

func parseTime(v string) (time.Time, error) {
	v = strings.TrimSpace(v)
	if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.UnixMilli(ms).UTC(), nil
	}
	for _, layout := range []string{"2006-01-02 15:04:05.999", "2006-01-02T15:04:05.999Z07:00", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, v, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, strconv.ErrSyntax
}

// fingerprint names the settings that decide the events, so that a position is never
// restored into a generator making other events.
func (o options) fingerprint() string {
	c := o.cfg
	return strconv.FormatInt(o.events, 10) + "/" + strconv.FormatUint(c.rate, 10) + "/" +
		strconv.FormatInt(c.person, 10) + ":" + strconv.FormatInt(c.auction, 10) + ":" + strconv.FormatInt(c.bid, 10) + "/" +
		strconv.FormatInt(c.baseTime, 10)
}
