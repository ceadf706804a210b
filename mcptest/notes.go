package mcptest

import (
	"strings"
	"sync"
	"time"
)

// notes is the shared store of the notes tools ([Options.Notes]): add_note writes to it,
// list_notes reads it.
type notes struct {
	mu    sync.Mutex // guards list, and add_note's read-modify-write unless LostUpdates
	list  []string
	racy  sync.Mutex // guards racyList: the store as a lock-free read-modify-write sees it
	racyL []string
}

// lostUpdateWindow is how long a racy add_note waits between reading the store and writing it
// back: calls arriving meanwhile read the same list, and only the last write survives.
const lostUpdateWindow = 100 * time.Millisecond

// snapshot returns the notes.
func (n *notes) snapshot(lost bool) []string {
	if lost {
		n.racy.Lock()
		defer n.racy.Unlock()
		return append([]string(nil), n.racyL...)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.list...)
}

// add appends text. With lost, it reads the list, works a while, then writes back what it read
// plus text, with no lock held in between: concurrent adds overwrite each other (each call's
// access to the slice is locked, so the bug is a lost update, not a memory race).
func (n *notes) add(b *Backend, text string, lost bool) {
	if !lost {
		n.mu.Lock()
		defer n.mu.Unlock()
		n.list = append(n.list, text)
		return
	}
	read := n.snapshot(true)
	t := time.NewTimer(lostUpdateWindow)
	select {
	case <-t.C:
	case <-b.ctx.Done():
		t.Stop()
	}
	n.racy.Lock()
	n.racyL = append(read, text)
	n.racy.Unlock()
}

// notesTools are the tools [Options.Notes] adds: a write tool and the read tool that pairs
// with it.
func notesTools() []*tool {
	return []*tool{
		{
			Name: "add_note", Title: "Add note", Description: "Adds a note to the shared store; answers \"added\".",
			InputSchema: objectSchema(map[string]any{"text": prop("string", "The note.")}, "text"),
			Annotations: map[string]any{"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false},
			run:         runAddNote,
		},
		{
			Name: "list_notes", Title: "List notes", Description: "Lists every note of the shared store, one a line.",
			InputSchema: objectSchema(map[string]any{}),
			Annotations: readOnly(),
			run:         runListNotes,
		},
	}
}

func runAddNote(b *Backend, tc *toolCall) (*toolResult, *rpcError) {
	text, err := tc.args.str("text", true, "")
	if err != nil {
		return invalidArgs("add_note", err)
	}
	b.notes.add(b, text, b.opts.LostUpdates)
	return textResult("added"), nil
}

func runListNotes(b *Backend, _ *toolCall) (*toolResult, *rpcError) {
	list := b.notes.snapshot(b.opts.LostUpdates)
	r := textResult(strings.Join(list, "\n"))
	r.StructuredContent = map[string]any{"notes": list, "count": len(list)}
	return r, nil
}

// markDestructive annotates every tool destructiveHint ([Options.AllDestructive]).
func markDestructive(all []*tool) []*tool {
	out := make([]*tool, len(all))
	for i, t := range all {
		c := *t
		c.Annotations = map[string]any{"readOnlyHint": false, "destructiveHint": true}
		out[i] = &c
	}
	return out
}
