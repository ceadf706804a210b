package mcpserve

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"time"
)

// DrainWait bounds how long the end of a stdio client's input waits for the answers: the
// longest tool (a 60 s load run with its report and grace) fits in it.
const DrainWait = 2 * time.Minute

// Drain pairs a stdio server's input and output so that the end of the input waits for the
// answers: a client that sends its requests and closes stdin (a script, `mcpspec mcp <
// requests.jsonl`) still gets every answer, where the server would otherwise stop reading,
// close the connection and drop the calls in flight. The reader returns end of input only once
// every request read (a message with a method and an id) has been answered on the writer (a
// message with an id and a result or an error), or after wait at most.
type Drain struct {
	r    io.Reader
	w    io.Writer
	wait time.Duration

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced whenever answered grows
	asked    map[string]bool
	answered map[string]bool
	inLine   []byte // the input's unfinished last line
	outLine  []byte // the output's unfinished last line
}

// NewDrain returns the pair around r and w; wait bounds how long end of input waits.
func NewDrain(r io.Reader, w io.Writer, wait time.Duration) *Drain {
	return &Drain{r: r, w: w, wait: wait, changed: make(chan struct{}), asked: map[string]bool{}, answered: map[string]bool{}}
}

// Reader is the input side: it notes each request, and holds back end of input.
func (d *Drain) Reader() io.Reader { return drainReader{d} }

// Writer is the output side: it notes each answer.
func (d *Drain) Writer() io.Writer { return drainWriter{d} }

type drainReader struct{ d *Drain }
type drainWriter struct{ d *Drain }

func (r drainReader) Read(p []byte) (int, error) {
	d := r.d
	n, err := d.r.Read(p)
	d.mu.Lock()
	d.inLine = scanLines(append(d.inLine, p[:n]...), func(m message) {
		if m.Method != "" && len(m.ID) > 0 {
			d.asked[string(m.ID)] = true
		}
	})
	d.mu.Unlock()
	if err == io.EOF {
		d.awaitAnswers()
	}
	return n, err
}

func (w drainWriter) Write(p []byte) (int, error) {
	d := w.d
	n, err := d.w.Write(p)
	d.mu.Lock()
	d.outLine = scanLines(append(d.outLine, p[:n]...), func(m message) {
		if m.Method == "" && len(m.ID) > 0 {
			d.answered[string(m.ID)] = true
		}
	})
	close(d.changed)
	d.changed = make(chan struct{})
	d.mu.Unlock()
	return n, err
}

// awaitAnswers blocks until every request read has an answer, or wait has passed.
func (d *Drain) awaitAnswers() {
	deadline := time.NewTimer(d.wait)
	defer deadline.Stop()
	for {
		d.mu.Lock()
		pending := false
		for id := range d.asked {
			if !d.answered[id] {
				pending = true
				break
			}
		}
		changed := d.changed
		d.mu.Unlock()
		if !pending {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			return
		}
	}
}

// message is the part of a JSON-RPC message Drain looks at.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// scanLines calls each for every message on the complete lines of buf (an object, or each
// element of a batch) and returns the unfinished rest. Lines that are not JSON are skipped:
// the server answers them as it will.
func scanLines(buf []byte, each func(message)) []byte {
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			if len(buf) > 1<<20 { // a line longer than any we need to look at: stop keeping it
				return buf[:0]
			}
			return buf
		}
		line := bytes.TrimSpace(buf[:i])
		buf = buf[i+1:]
		var m message
		if len(line) > 0 && line[0] == '[' {
			var batch []message
			if json.Unmarshal(line, &batch) == nil {
				for _, m := range batch {
					each(m)
				}
			}
		} else if json.Unmarshal(line, &m) == nil {
			each(m)
		}
	}
}
