package nexmark

import (
	"math"
	"math/bits"
	"strconv"
	"sync"
)

// Event types, as the events table's event_type column holds them.
const (
	Person  = 0
	Auction = 1
	Bid     = 2
)

// The generator's constants (NEXMARK.md).
const (
	firstPersonID  = 1000
	firstAuctionID = 1000
	firstCategory  = 10
	numCategories  = 5
	activePeople   = 1000 // sellers and bidders are drawn from the last this many persons
	personLead     = 10   // ... plus this many not yet created
	inFlight       = 100  // bids are for the last this many auctions
	auctionLead    = 10   // ... plus this many not yet created
	hotRatio       = 100  // hot sellers, bidders and auctions are the first of each 100
	numChannels    = 10000
	avgPersonSize  = 200
	avgAuctionSize = 500
	avgBidSize     = 100
)

// config is what decides the events: the same config gives the same event for an id.
type config struct {
	rate     uint64 // events per second of event time
	baseTime int64  // epoch millis of event 0
	// Proportions of persons, auctions and bids in each block of total events.
	person, auction, bid, total int64
}

// kind returns the type of event id.
func (c *config) kind(id int64) int {
	off := id % c.total
	switch {
	case off < c.person:
		return Person
	case off < c.person+c.auction:
		return Auction
	}
	return Bid
}

// time returns the event time of event id, in epoch millis: the rate spaces events
// evenly, in microseconds, rounded down.
func (c *config) time(id int64) int64 {
	hi, lo := bits.Mul64(uint64(id), 1_000_000)
	if hi >= c.rate {
		return math.MaxInt64 // beyond any representable time
	}
	us, _ := bits.Div64(hi, lo, c.rate)
	return c.baseTime + int64(us/1000)
}

// lastPerson is the base-0 id of the last person created at or before event id.
func (c *config) lastPerson(id int64) int64 {
	block, off := id/c.total, id%c.total
	if off >= c.person {
		off = c.person - 1
	}
	return block*c.person + off
}

// lastAuction is the base-0 id of the last auction created at or before event id
// (-1 before the first).
func (c *config) lastAuction(id int64) int64 {
	block, off := id/c.total, id%c.total
	switch {
	case off < c.person:
		block, off = block-1, c.auction-1
	case off >= c.person+c.auction:
		off = c.auction - 1
	default:
		off -= c.person
	}
	return block*c.auction + off
}

// somePerson draws a base-0 person id among the active ones and a few ahead.
func (c *config) somePerson(id int64, r *rng) int64 {
	n := c.lastPerson(id) + 1
	active := min(n, activePeople)
	return n - active + int64(r.intn(uint64(active+personLead)))
}

// someAuction draws a base-0 auction id among those in flight and a few ahead.
func (c *config) someAuction(id int64, r *rng) int64 {
	last := c.lastAuction(id)
	lo := max(last-inFlight, 0)
	return lo + int64(r.intn(uint64(last-lo+1+auctionLead)))
}

// event is one generated event. Its byte slices point into the generator's scratch
// buffer or its fixed tables and are valid until the next event is generated.
type event struct {
	id   int64
	kind int
	time int64 // dateTime, epoch millis

	// person
	personID                       int64
	name, email, card, city, state []byte
	// auction
	auctionID, initialBid, reserve, expires, seller, category int64
	itemName, description                                     []byte
	// bid
	auction, bidder, price int64
	channel, url           []byte

	extra []byte

	// Where extra, channel and url lie in their fixed texts (extraText, the channel
	// table's bytes), for a column that copies a batch's values at once (see column).
	extraAt, channelAt, urlAt span
}

// span is a string of a fixed text: its offset and length.
type span struct{ off, n int32 }

func (s span) of(text []byte) []byte { return text[s.off : s.off+s.n : s.off+s.n] }

// generator makes events; its scratch buffer is reused from event to event.
type generator struct {
	cfg     config
	horizon int64 // events spanned by inFlight auctions: an auction's expected length
	buf     []byte
}

func newGenerator(cfg config) *generator {
	g := &generator{cfg: cfg, buf: make([]byte, 0, 256)}
	if cfg.auction > 0 {
		g.horizon = inFlight * cfg.total / cfg.auction
	}
	return g
}

// generate fills e with event id.
func (g *generator) generate(id int64, e *event) {
	c := &g.cfg
	r := newRNG(uint64(id))
	g.buf = g.buf[:0]
	e.id, e.kind, e.time = id, c.kind(id), c.time(id)
	switch e.kind {
	case Person:
		e.personID = c.lastPerson(id) + firstPersonID
		start := len(g.buf)
		g.buf = append(g.buf, firstNames[r.intn(uint64(len(firstNames)))]...)
		g.buf = append(g.buf, ' ')
		g.buf = append(g.buf, lastNames[r.intn(uint64(len(lastNames)))]...)
		e.name = g.buf[start:len(g.buf):len(g.buf)]
		start = len(g.buf)
		g.str(&r, 7, ' ')
		g.buf = append(g.buf, '@')
		g.str(&r, 5, ' ')
		g.buf = append(g.buf, ".com"...)
		e.email = g.buf[start:len(g.buf):len(g.buf)]
		start = len(g.buf)
		for i := 0; i < 4; i++ {
			if i > 0 {
				g.buf = append(g.buf, ' ')
			}
			n := r.intn(10000)
			g.buf = append(g.buf, byte('0'+n/1000), byte('0'+n/100%10), byte('0'+n/10%10), byte('0'+n%10))
		}
		e.card = g.buf[start:len(g.buf):len(g.buf)]
		e.city = cities[r.intn(uint64(len(cities)))]
		e.state = states[r.intn(uint64(len(states)))]
		size := 8 + len(e.name) + len(e.email) + len(e.card) + len(e.city) + len(e.state)
		e.extraAt = extra(&r, size, avgPersonSize)
	case Auction:
		e.auctionID = c.lastAuction(id) + firstAuctionID
		if r.intn(4) > 0 {
			e.seller = c.lastPerson(id) / hotRatio * hotRatio
		} else {
			e.seller = c.somePerson(id, &r)
		}
		e.seller += firstPersonID
		e.category = firstCategory + int64(r.intn(numCategories))
		e.initialBid = price(&r)
		e.reserve = e.initialBid + price(&r)
		span := c.time(id+g.horizon) - e.time
		e.expires = e.time + 1 + int64(r.intn(uint64(max(2*span, 1))))
		start := len(g.buf)
		g.str(&r, 20, ' ')
		e.itemName = g.buf[start:len(g.buf):len(g.buf)]
		start = len(g.buf)
		g.str(&r, 100, ' ')
		e.description = g.buf[start:len(g.buf):len(g.buf)]
		e.extraAt = extra(&r, 8+len(e.itemName)+len(e.description)+40, avgAuctionSize)
	default:
		if r.intn(2) > 0 {
			e.auction = c.lastAuction(id) / hotRatio * hotRatio
		} else {
			e.auction = c.someAuction(id, &r)
		}
		e.auction += firstAuctionID
		if r.intn(4) > 0 {
			e.bidder = c.lastPerson(id)/hotRatio*hotRatio + 1
		} else {
			e.bidder = c.somePerson(id, &r)
		}
		e.bidder += firstPersonID // once: Flink's generator adds it twice, a known bug
		e.price = price(&r)
		t := channelTable()
		var i uint64
		if r.intn(2) > 0 {
			i = numChannels + r.intn(uint64(len(hotChannels))) // the hot ones follow the others
		} else {
			i = r.intn(numChannels)
		}
		e.channelAt, e.urlAt = t.name(i), t.url(i)
		e.channel, e.url = e.channelAt.of(t.bytes), e.urlAt.of(t.bytes)
		e.extraAt = extra(&r, 32, avgBidSize)
	}
	e.extra = e.extraAt.of(extraText())
}

// str appends a random string of 3 to max-1 characters, each a lower-case letter or,
// with probability 1/13, special, trimmed of spaces at both ends.
func (g *generator) str(r *rng, max int, special byte) {
	start := len(g.buf)
	n := 3 + int(r.intn(uint64(max-3)))
	for i := 0; i < n; i++ {
		// One draw for both choices: the high half decides special, the low the letter.
		x := r.next()
		if (x>>32)*13>>32 == 0 {
			g.buf = append(g.buf, special)
		} else {
			g.buf = append(g.buf, byte('a'+(x&0xffffffff)*26>>32))
		}
	}
	if special == ' ' {
		s := g.buf[start:]
		i, j := 0, len(s)
		for i < j && s[i] == ' ' {
			i++
		}
		for j > i && s[j-1] == ' ' {
			j--
		}
		n := copy(s, s[i:j])
		g.buf = g.buf[:start+n]
	}
}

// price is log-uniform from 100 to 10^8 cents.
func price(r *rng) int64 { return priceAt(r.float() * 6) }

// exactPrice is the price for y in [0, 6): 10^y dollars, rounded to the cent, by
// math.Pow's power of ten.
func exactPrice(y float64) int64 { return int64(math.Round(pow10(y) * 100)) }

// priceAt is exactPrice(y), most often without its Exp (TestPriceAtIsExact): 2^x for
// x = y·log2(10) from a table of 2^(k/256) and a polynomial for the rest, within 1e-14
// of 10^y, so that the cents it rounds to are exactPrice's unless the value is within
// 1e-5 of half a cent (about one price in 50,000), which exactPrice then rounds.
func priceAt(y float64) int64 {
	t := y * (math.Log2E * math.Ln10 * 256) // log2(10)·256 as a constant
	k := int(t)
	f := (t - float64(k)) * (math.Ln2 / 256)
	p := 1 + f*(1+f*(1.0/2+f*(1.0/6+f*(1.0/24+f*(1.0/120)))))
	v := math.Ldexp(exp2Table[k&255]*p, k>>8) * 100
	fl := math.Floor(v)
	if d := v - fl - 0.5; d > -1e-5 && d < 1e-5 {
		return exactPrice(y)
	}
	if v-fl > 0.5 {
		return int64(fl) + 1
	}
	return int64(fl)
}

// exp2Table holds 2^(k/256) for k in [0, 256).
var exp2Table = func() (t [256]float64) {
	for k := range t {
		t[k] = math.Exp2(float64(k) / 256)
	}
	return t
}()

// ln10 is math.Log(10), computed once as math.Pow computes it for every call.
var ln10 = math.Log(10)

// pow10 is math.Pow(10, y) for y in [0, 6], bit for bit (TestPow10IsMathPow), without
// its Log(10) per call: the same steps as math.Pow's for a finite positive y (the
// fractional power by Exp, the integral one by successive squaring of Frexp(10),
// then Ldexp), with Log(10) a constant.
func pow10(y float64) float64 {
	switch y {
	case 0:
		return 1
	case 1:
		return 10
	case 0.5:
		return math.Sqrt(10)
	}
	yi, yf := math.Modf(y)
	a1, ae := 1.0, 0
	if yf != 0 {
		if yf > 0.5 {
			yf--
			yi++
		}
		a1 = math.Exp(yf * ln10)
	}
	x1, xe := 0.625, 4 // math.Frexp(10)
	for i := int64(yi); i != 0; i >>= 1 {
		if i&1 == 1 {
			a1 *= x1
			ae += xe
		}
		x1 *= x1
		xe <<= 1
		if x1 < .5 {
			x1 += x1
			xe--
		}
	}
	return math.Ldexp(a1, ae)
}

// extra pads an event of size bytes to about avg: a random lower-case string of avg-size
// bytes ± 20%, cut from a fixed random text (extraText) so that padding costs a copy,
// not a draw a byte.
func extra(r *rng, size, avg int) span {
	if size > avg {
		return span{}
	}
	t := avg - size
	delta := int(math.Round(float64(t) * 0.2))
	n := t - delta
	if delta > 0 {
		n += int(r.intn(uint64(2 * delta)))
	}
	off := r.intn(uint64(extraTextLen - n))
	return span{int32(off), int32(n)}
}

var (
	firstNames  = bytesOf("Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter")
	lastNames   = bytesOf("Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris")
	cities      = bytesOf("Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne")
	states      = bytesOf("AZ", "CA", "ID", "OR", "WA", "WY")
	hotChannels = bytesOf("Google", "Facebook", "Baidu", "Apple")
)

func bytesOf(s ...string) [][]byte {
	out := make([][]byte, len(s))
	for i, x := range s {
		out[i] = []byte(x)
	}
	return out
}

// Salts of the random sources of the fixed tables, apart from every event's.
const (
	saltEvent   = 0x6e65786d61726b00 // "nexmark\0"
	saltHotURL  = 0x686f7475726c0000
	saltChannel = 0x6368616e6e656c00
	saltExtra   = 0x6578747261000000
)

// channels are the bid channels' names and URLs: fixed, so that a channel always has
// the same URL, and a function of the channel's number alone; the hot channels are
// numbers numChannels and on. They live in one byte slice with offsets, free of
// pointers, so that the garbage collector has nothing to scan in them (as [][]byte,
// its 20,000 slices cost every cycle a scan).
type channels struct {
	bytes    []byte
	nameOffs []int32 // channel i's name is bytes[nameOffs[i]:urlOffs[i]]
	urlOffs  []int32 // ... and its URL bytes[urlOffs[i]:nameOffs[i+1]]
}

func (t *channels) name(i uint64) span {
	return span{t.nameOffs[i], t.urlOffs[i] - t.nameOffs[i]}
}

func (t *channels) url(i uint64) span {
	return span{t.urlOffs[i], t.nameOffs[i+1] - t.urlOffs[i]}
}

var channelTable = sync.OnceValue(func() *channels {
	n := numChannels + len(hotChannels)
	t := &channels{nameOffs: make([]int32, 0, n+1), urlOffs: make([]int32, 0, n)}
	g := &generator{}
	url := func(r *rng) []byte {
		g.buf = append(g.buf[:0], "https://www.nexmark.com/"...)
		for i := 0; i < 3; i++ {
			g.str(r, 5, '_')
			g.buf = append(g.buf, '/')
		}
		return append(g.buf, "item.htm?query=1"...)
	}
	var hotURLs [][]byte
	for i := range hotChannels {
		r := newRNG(saltHotURL + uint64(i))
		hotURLs = append(hotURLs, append([]byte(nil), url(&r)...))
	}
	for i := 0; i < numChannels; i++ {
		r := newRNG(saltChannel + uint64(i))
		u := url(&r)
		// As the suite's generator does, nine channels in ten carry their id in the URL
		// (queries q21 and q22 extract it).
		if r.intn(10) > 0 {
			u = append(u, "&channel_id="...)
			u = strconv.AppendInt(u, int64(abs32(int32(bits.Reverse32(uint32(i))))), 10)
		}
		t.nameOffs = append(t.nameOffs, int32(len(t.bytes)))
		t.bytes = strconv.AppendInt(append(t.bytes, "channel-"...), int64(i), 10)
		t.urlOffs = append(t.urlOffs, int32(len(t.bytes)))
		t.bytes = append(t.bytes, u...)
	}
	for i, c := range hotChannels {
		t.nameOffs = append(t.nameOffs, int32(len(t.bytes)))
		t.bytes = append(t.bytes, c...)
		t.urlOffs = append(t.urlOffs, int32(len(t.bytes)))
		t.bytes = append(t.bytes, hotURLs[i]...)
	}
	t.nameOffs = append(t.nameOffs, int32(len(t.bytes)))
	return t
})

func abs32(x int32) int64 {
	if x < 0 {
		return -int64(x)
	}
	return int64(x)
}

// extraText is the random lower-case text extra strings are cut from.
var extraText = sync.OnceValue(func() []byte {
	r := newRNG(saltExtra)
	b := make([]byte, extraTextLen)
	for i := range b {
		b[i] = byte('a' + r.intn(26))
	}
	return b
})

const extraTextLen = 1 << 20

// rng is splitmix64: tiny state, so a source per event costs nothing, and good enough
// statistics for a benchmark's data.
type rng struct{ s uint64 }

func newRNG(seed uint64) rng {
	r := rng{s: seed ^ saltEvent}
	r.next() // decorrelate neighbouring seeds
	return r
}

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn is uniform in [0, n) for n > 0 (Lemire's multiply; the bias is below 2^-40 for
// the bounds used here).
func (r *rng) intn(n uint64) uint64 {
	hi, _ := bits.Mul64(r.next(), n)
	return hi
}

// float is uniform in [0, 1).
func (r *rng) float() float64 { return float64(r.next()>>11) / (1 << 53) }
