package kafka

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The admin requests of this package, by hand with kmsg: kgo routes each to the
// partition's leader or the group's coordinator.

// topicPartition names a partition.
type topicPartition struct {
	Topic     string
	Partition int32
}

func (tp topicPartition) String() string { return fmt.Sprintf("%s/%d", tp.Topic, tp.Partition) }

// errNoTopic: a topic does not exist.
var errNoTopic = errors.New("topic does not exist")

// topicIDs maps topic names to their ids, which newer versions of some requests need.
type topicIDs map[string][16]byte

// partitionsOf lists the partitions of topics, topic by topic in the order given and
// by partition number.
func partitionsOf(ctx context.Context, cl *kgo.Client, topics []string) ([]topicPartition, error) {
	tps, _, err := metadata(ctx, cl, topics)
	return tps, err
}

// metadata lists the partitions of topics, as partitionsOf, and their ids.
func metadata(ctx context.Context, cl *kgo.Client, topics []string) ([]topicPartition, topicIDs, error) {
	req := kmsg.NewPtrMetadataRequest()
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	var resp *kmsg.MetadataResponse
	for {
		var err error
		if resp, err = req.RequestWith(ctx, cl); err != nil {
			return nil, nil, err
		}
		retry := false
		for _, t := range resp.Topics {
			if e := kerr.ErrorForCode(t.ErrorCode); e != nil {
				if errors.Is(e, kerr.UnknownTopicOrPartition) {
					return nil, nil, fmt.Errorf("topic %q: %w", deref(t.Topic), errNoTopic)
				}
				if !kerr.IsRetriable(e) {
					return nil, nil, fmt.Errorf("topic %q: %w", deref(t.Topic), e)
				}
				retry = true
			}
		}
		if !retry {
			break
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return nil, nil, err
		}
	}
	byName := map[string][]int32{}
	ids := topicIDs{}
	for _, t := range resp.Topics {
		ids[deref(t.Topic)] = t.TopicID
		for _, p := range t.Partitions {
			byName[deref(t.Topic)] = append(byName[deref(t.Topic)], p.Partition)
		}
	}
	var tps []topicPartition
	for _, t := range topics {
		ps := byName[t]
		if len(ps) == 0 {
			return nil, nil, fmt.Errorf("topic %q: %w", t, errNoTopic)
		}
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
		for _, p := range ps {
			tps = append(tps, topicPartition{t, p})
		}
	}
	return tps, ids, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Special timestamps of ListOffsets.
const (
	latestTimestamp   = -1
	earliestTimestamp = -2
)

// listOffsets returns, for each partition, the earliest (ts -2), the end (ts -1: the
// high watermark, or the last stable offset when readCommitted) or the first offset
// whose record's timestamp is at least ts; a timestamp after every record gives the
// end offset.
func listOffsets(ctx context.Context, cl *kgo.Client, tps []topicPartition, ts int64, readCommitted bool) (map[topicPartition]int64, error) {
	out := make(map[topicPartition]int64, len(tps))
	if len(tps) == 0 {
		return out, nil
	}
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	if readCommitted {
		req.IsolationLevel = 1
	}
	idx := map[string]int{}
	for _, tp := range tps {
		i, ok := idx[tp.Topic]
		if !ok {
			i = len(req.Topics)
			idx[tp.Topic] = i
			rt := kmsg.NewListOffsetsRequestTopic()
			rt.Topic = tp.Topic
			req.Topics = append(req.Topics, rt)
		}
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition = tp.Partition
		rp.Timestamp = ts
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	var beyond []topicPartition // timestamps after every record
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			tp := topicPartition{t.Topic, p.Partition}
			if e := kerr.ErrorForCode(p.ErrorCode); e != nil {
				return nil, fmt.Errorf("listing offsets of %s: %w", tp, e)
			}
			if p.Offset < 0 {
				beyond = append(beyond, tp)
				continue
			}
			out[tp] = p.Offset
		}
	}
	if len(beyond) > 0 && ts >= 0 {
		ends, err := listOffsets(ctx, cl, beyond, latestTimestamp, readCommitted)
		if err != nil {
			return nil, err
		}
		for tp, o := range ends {
			out[tp] = o
		}
	}
	for _, tp := range tps {
		if _, ok := out[tp]; !ok {
			return nil, fmt.Errorf("listing offsets of %s: no answer", tp)
		}
	}
	return out, nil
}

// committed is an offset committed to a group, with its metadata.
type committed struct {
	Offset   int64
	Metadata string
}

// fetchCommitted returns the offsets group committed for tps (a partition without one
// is absent). It asks for stable offsets: while a transaction that commits offsets of
// the group is open, it waits.
func fetchCommitted(ctx context.Context, cl *kgo.Client, group string, tps []topicPartition) (map[topicPartition]committed, error) {
	for {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Group = group
		req.RequireStable = true
		idx := map[string]int{}
		for _, tp := range tps {
			i, ok := idx[tp.Topic]
			if !ok {
				i = len(req.Topics)
				idx[tp.Topic] = i
				rt := kmsg.NewOffsetFetchRequestTopic()
				rt.Topic = tp.Topic
				req.Topics = append(req.Topics, rt)
			}
			req.Topics[i].Partitions = append(req.Topics[i].Partitions, tp.Partition)
		}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return nil, err
		}
		out, err := readOffsetFetch(group, resp)
		if errors.Is(err, kerr.GroupIDNotFound) {
			return map[topicPartition]committed{}, nil
		}
		if errors.Is(err, kerr.UnstableOffsetCommit) || (err != nil && kerr.IsRetriable(err)) {
			if err := sleep(ctx, 50*time.Millisecond); err != nil {
				return nil, err
			}
			continue
		}
		return out, err
	}
}

func readOffsetFetch(group string, resp *kmsg.OffsetFetchResponse) (map[topicPartition]committed, error) {
	out := map[topicPartition]committed{}
	code := resp.ErrorCode
	topics := resp.Topics
	for _, g := range resp.Groups { // v8+
		if g.Group != group {
			continue
		}
		code = g.ErrorCode
		topics = nil
		for _, t := range g.Topics {
			rt := kmsg.NewOffsetFetchResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetFetchResponseTopicPartition()
				rp.Partition, rp.Offset, rp.Metadata, rp.ErrorCode = p.Partition, p.Offset, p.Metadata, p.ErrorCode
				rt.Partitions = append(rt.Partitions, rp)
			}
			topics = append(topics, rt)
		}
	}
	if e := kerr.ErrorForCode(code); e != nil {
		return nil, fmt.Errorf("fetching the offsets of group %q: %w", group, e)
	}
	for _, t := range topics {
		for _, p := range t.Partitions {
			if e := kerr.ErrorForCode(p.ErrorCode); e != nil {
				return nil, fmt.Errorf("fetching the offsets of group %q: %w", group, e)
			}
			if p.Offset >= 0 {
				out[topicPartition{t.Topic, p.Partition}] = committed{Offset: p.Offset, Metadata: deref(p.Metadata)}
			}
		}
	}
	return out, nil
}

// commitOffsets commits offsets to group as a client outside the group (generation -1),
// as Flink's source does.
func commitOffsets(ctx context.Context, cl *kgo.Client, group string, ids topicIDs, offsets map[topicPartition]int64) error {
	if len(offsets) == 0 {
		return nil
	}
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group = group
	req.Generation = -1
	idx := map[string]int{}
	for tp, o := range offsets {
		i, ok := idx[tp.Topic]
		if !ok {
			i = len(req.Topics)
			idx[tp.Topic] = i
			rt := kmsg.NewOffsetCommitRequestTopic()
			rt.Topic, rt.TopicID = tp.Topic, ids[tp.Topic]
			req.Topics = append(req.Topics, rt)
		}
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition = tp.Partition
		rp.Offset = o
		rp.LeaderEpoch = -1
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("committing offsets to group %q: %w", group, err)
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if e := kerr.ErrorForCode(p.ErrorCode); e != nil {
				return fmt.Errorf("committing offsets to group %q: %s: %w", group, topicPartition{t.Topic, p.Partition}, e)
			}
		}
	}
	return nil
}
