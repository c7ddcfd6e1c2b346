package connector

import (
	"context"
	"math"
	"time"
)

// tokenBucket paces a source to rate rows a second without sleeping per row: tokens
// accrue continuously up to a burst of at most one batch (or 50 ms of rows), and a
// caller that finds too few waits for at most one poll interval.
type tokenBucket struct {
	rate   float64
	burst  float64
	tokens float64
	last   time.Time
	now    func() time.Time
}

func newTokenBucket(rate float64, batch int, now func() time.Time) *tokenBucket {
	burst := math.Min(float64(batch), rate*pollInterval.Seconds())
	if burst < 1 {
		burst = 1
	}
	return &tokenBucket{rate: rate, burst: burst, tokens: burst, last: now(), now: now}
}

func (b *tokenBucket) refill() {
	t := b.now()
	if dt := t.Sub(b.last).Seconds(); dt > 0 {
		b.tokens = math.Min(b.burst, b.tokens+dt*b.rate)
	}
	b.last = t
}

// take returns how many of want rows may be produced now, waiting up to a poll interval
// for at least one (or for a full burst, when want is larger).
func (b *tokenBucket) take(ctx context.Context, want int) (int, error) {
	b.refill()
	goal := math.Min(float64(want), b.burst)
	if b.tokens < goal {
		wait := time.Duration((goal - b.tokens) / b.rate * float64(time.Second))
		if wait > pollInterval {
			wait = pollInterval
		}
		if wait > 0 {
			timer := time.NewTimer(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
				timer.Stop()
				return 0, ctx.Err()
			}
		}
		b.refill()
	}
	n := int(math.Min(float64(want), b.tokens))
	if n < 0 {
		n = 0
	}
	b.tokens -= float64(n)
	return n, nil
}
