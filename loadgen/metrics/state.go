package metrics

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/mcpspec/mcpspec/result"
)

// maxMessages bounds the distinct failure messages a run keeps.
const maxMessages = 100

// State is the raw data of a run in memory: histograms and counters. It is what an
// [Aggregator] fills, what [State.Encode] serializes into [Histograms], and what
// [DecodeState] and [State.Merge] rebuild and combine exactly. It is not safe for concurrent
// use.
type State struct {
	ops      []Op
	opIndex  map[string]int // by kind+name
	latency  *hdr.Histogram
	service  *hdr.Histogram
	perOp    []*hdr.Histogram
	opCount  []OpCounters
	seconds  map[int64]*second
	counters Counters
	messages map[messageKey]int64
	msgOrder []messageKey
	// maxAnswered is the longest service time of an answered request so far.
	maxAnswered time.Duration
}

type second struct {
	requests, errors, inFlight int64
	offered                    float64
	h                          *hdr.PackedHistogram
}

type messageKey struct {
	op       string
	category result.Category
	message  string
}

// NewState returns an empty state for a run whose operations are ops ([Sample.Op] indexes
// them).
func NewState(ops []Op) *State {
	st := &State{
		latency: newDense(), service: newDense(),
		seconds:  map[int64]*second{},
		messages: map[messageKey]int64{},
		opIndex:  map[string]int{},
	}
	for _, op := range ops {
		st.op(op)
	}
	return st
}

// op returns the index of op, adding it when new.
func (st *State) op(op Op) int {
	key := string(op.Kind) + "\x00" + op.Name
	if i, ok := st.opIndex[key]; ok {
		return i
	}
	st.ops = append(st.ops, op)
	st.perOp = append(st.perOp, nil)
	st.opCount = append(st.opCount, OpCounters{Name: op.Name, Kind: op.Kind})
	st.opIndex[key] = len(st.ops) - 1
	return len(st.ops) - 1
}

// Ops returns the operation table.
func (st *State) Ops() []Op { return st.ops }

// Add records one sample.
func (st *State) Add(s *Sample) {
	lat := micros(s.Latency())
	_ = st.latency.RecordValue(lat)
	_ = st.service.RecordValue(micros(s.Service()))
	c := &st.counters
	c.Requests++
	isErr := s.Error()
	if isErr {
		c.Errors++
		if c.ByCategory == nil {
			c.ByCategory = map[result.Category]int64{}
		}
		c.ByCategory[categoryKey(s)]++
	}
	if s.Failed {
		c.AssertionFailures++
	}
	if s.Category == "" {
		st.maxAnswered = max(st.maxAnswered, s.Service())
	}
	// A request cut off by the end of the graceful stop hung only if it had waited longer than
	// any answered one: a tool slow by design still had its answer coming. The cut-off ones
	// come last, once the answered ones are in.
	if s.Unanswered && s.Service() > st.maxAnswered {
		c.Unanswered++
	}
	if s.Crash {
		c.Crashes++
	}
	if s.Lost {
		c.Lost++
	}
	if i := int(s.Op); i >= 0 && i < len(st.ops) {
		h := st.perOp[i]
		if h == nil {
			h = newDense()
			st.perOp[i] = h
		}
		_ = h.RecordValue(lat)
		oc := &st.opCount[i]
		oc.Requests++
		if isErr {
			oc.Errors++
			if oc.ByCategory == nil {
				oc.ByCategory = map[result.Category]int64{}
			}
			oc.ByCategory[categoryKey(s)]++
		}
		if s.Failed {
			oc.AssertionFailures++
			if oc.FirstFailure == "" {
				oc.FirstFailure = s.Msg
			}
		}
		if (isErr || s.Failed) && s.Msg != "" {
			st.message(messageKey{op: oc.Name, category: failureCategory(s), message: s.Msg}, 1)
		}
	}
	sec := st.second(int64(s.Done / time.Second))
	sec.requests++
	if isErr {
		sec.errors++
	}
	_ = sec.h.RecordValue(lat)
}

// AddIteration counts one finished iteration.
func (st *State) AddIteration() { st.counters.Iterations++ }

// AddOffered counts n scheduled arrivals (open model).
func (st *State) AddOffered(n int64) { st.counters.Offered += n }

// SetSecond records the gauges of second t: requests in flight at its end and the offered
// rate.
func (st *State) SetSecond(t int64, inFlight int64, offered float64) {
	sec := st.second(t)
	sec.inFlight, sec.offered = inFlight, offered
}

func (st *State) second(t int64) *second {
	sec := st.seconds[t]
	if sec == nil {
		sec = &second{h: newPacked()}
		st.seconds[t] = sec
	}
	return sec
}

func (st *State) message(k messageKey, n int64) {
	if _, ok := st.messages[k]; !ok {
		if len(st.messages) >= maxMessages {
			return
		}
		st.msgOrder = append(st.msgOrder, k)
	}
	st.messages[k] += n
}

// categoryKey is where a failed sample is counted in ByCategory.
func categoryKey(s *Sample) result.Category {
	if s.Category != "" {
		return s.Category
	}
	return ToolErrorCategory
}

// failureCategory is the category under which a failed sample's message is counted in
// Errors.Top.
func failureCategory(s *Sample) result.Category {
	if s.Error() {
		return categoryKey(s)
	}
	return AssertionFailedCategory
}

// Requests returns the requests recorded so far.
func (st *State) Requests() int64 { return st.counters.Requests }

// Latency returns the overall latency histogram (read-only).
func (st *State) Latency() *hdr.Histogram { return st.latency }

// Merge adds o's data to st exactly: histograms bucket by bucket, counters summed, seconds
// aligned by their offset, operations matched by kind and name.
func (st *State) Merge(o *State) {
	st.latency.Merge(o.latency)
	st.service.Merge(o.service)
	for i, op := range o.ops {
		j := st.op(op)
		if h := o.perOp[i]; h != nil {
			if st.perOp[j] == nil {
				st.perOp[j] = newDense()
			}
			st.perOp[j].Merge(h)
		}
		dst, src := &st.opCount[j], o.opCount[i]
		dst.Requests += src.Requests
		dst.Errors += src.Errors
		dst.AssertionFailures += src.AssertionFailures
		dst.ByCategory = addCounts(dst.ByCategory, src.ByCategory)
		if dst.FirstFailure == "" {
			dst.FirstFailure = src.FirstFailure
		}
	}
	for t, s := range o.seconds {
		d := st.second(t)
		d.requests += s.requests
		d.errors += s.errors
		d.inFlight += s.inFlight
		d.offered += s.offered
		d.h.Merge(s.h)
	}
	c := &st.counters
	c.Requests += o.counters.Requests
	c.Errors += o.counters.Errors
	c.Iterations += o.counters.Iterations
	c.AssertionFailures += o.counters.AssertionFailures
	c.Offered += o.counters.Offered
	c.Unanswered += o.counters.Unanswered
	c.Crashes += o.counters.Crashes
	c.Lost += o.counters.Lost
	c.ByCategory = addCounts(c.ByCategory, o.counters.ByCategory)
	for _, k := range o.msgOrder {
		st.message(k, o.messages[k])
	}
}

func addCounts(dst, src map[result.Category]int64) map[result.Category]int64 {
	if len(src) == 0 {
		return dst
	}
	if dst == nil {
		dst = map[result.Category]int64{}
	}
	for k, v := range src {
		dst[k] += v
	}
	return dst
}

// Encode serializes the state.
func (st *State) Encode() (Histograms, error) {
	var h Histograms
	var err error
	h.Unit = Unit
	if h.Latency, err = Encode(st.latency); err != nil {
		return h, err
	}
	if h.Service, err = Encode(st.service); err != nil {
		return h, err
	}
	h.Ops = slices.Clone(st.ops)
	h.PerOp = map[string]string{}
	for i, ph := range st.perOp {
		if ph == nil {
			continue
		}
		if h.PerOp[opKey(st.ops[i])], err = Encode(ph); err != nil {
			return h, err
		}
	}
	for _, t := range slices.Sorted(maps.Keys(st.seconds)) {
		s := st.seconds[t]
		enc, err := encodePacked(s.h)
		if err != nil {
			return h, err
		}
		h.Timeline = append(h.Timeline, SecondHistogram{T: t, Requests: s.requests, Errors: s.errors, InFlight: s.inFlight, Offered: s.offered, Histogram: enc})
	}
	h.Counters = st.counters
	h.Counters.ByCategory = maps.Clone(st.counters.ByCategory)
	h.Counters.PerOp = slices.Clone(st.opCount)
	h.Counters.Messages = st.topMessages(maxMessages)
	return h, nil
}

// opKey names an operation in [Histograms.PerOp].
func opKey(op Op) string { return string(op.Kind) + ":" + op.Name }

// DecodeState rebuilds the state serialized in h.
func DecodeState(h Histograms) (*State, error) {
	if h.Unit != "" && h.Unit != Unit {
		return nil, fmt.Errorf("histograms in %q, want %q", h.Unit, Unit)
	}
	st := NewState(h.Ops)
	var err error
	if st.latency, err = Decode(h.Latency); err != nil {
		return nil, fmt.Errorf("latency: %w", err)
	}
	if st.service, err = Decode(h.Service); err != nil {
		return nil, fmt.Errorf("service time: %w", err)
	}
	for i, op := range st.ops {
		if enc, ok := h.PerOp[opKey(op)]; ok {
			if st.perOp[i], err = Decode(enc); err != nil {
				return nil, fmt.Errorf("%s: %w", opKey(op), err)
			}
		}
	}
	for _, oc := range h.Counters.PerOp {
		i := st.op(Op{Name: oc.Name, Kind: oc.Kind})
		st.opCount[i] = oc
		st.opCount[i].ByCategory = maps.Clone(oc.ByCategory)
	}
	for _, s := range h.Timeline {
		p, err := decodePacked(s.Histogram)
		if err != nil {
			return nil, fmt.Errorf("second %d: %w", s.T, err)
		}
		st.seconds[s.T] = &second{requests: s.Requests, errors: s.Errors, inFlight: s.InFlight, offered: s.Offered, h: p}
	}
	st.counters = h.Counters
	st.counters.ByCategory = maps.Clone(h.Counters.ByCategory)
	st.counters.PerOp, st.counters.Messages = nil, nil
	for _, m := range h.Counters.Messages {
		st.message(messageKey{m.Op, m.Category, m.Message}, m.Count)
	}
	return st, nil
}

// topMessages returns up to n messages, most frequent first.
func (st *State) topMessages(n int) []ErrorMessage {
	out := make([]ErrorMessage, 0, len(st.msgOrder))
	for _, k := range st.msgOrder {
		out = append(out, ErrorMessage{Op: k.op, Category: k.category, Message: k.message, Count: st.messages[k]})
	}
	slices.SortStableFunc(out, func(a, b ErrorMessage) int { return cmp.Compare(b.Count, a.Count) })
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// Counters returns a copy of the run's counters so far, with each operation's.
func (st *State) Counters() Counters {
	c := st.counters
	c.ByCategory = maps.Clone(st.counters.ByCategory)
	c.PerOp = slices.Clone(st.opCount)
	return c
}

// CumulativeCounts returns, for each bound (in microseconds), how many latencies were at or
// below it, and the sum of all latencies in microseconds (a Prometheus histogram's buckets).
func (st *State) CumulativeCounts(bounds []int64) (counts []uint64, sum float64) {
	h := st.latency
	counts = make([]uint64, len(bounds))
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		sum += float64(b.Count) * float64(b.From+b.To) / 2
		for i, bound := range bounds {
			if b.From <= bound {
				counts[i] += uint64(b.Count)
			}
		}
	}
	return counts, sum
}
