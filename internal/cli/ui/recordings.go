package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"github.com/mcpspec/mcpspec/session/recording"
)

// Bounds of the recordings page.
const (
	// listTimeout bounds `record list`, which reads every recording.
	listTimeout = 30 * time.Second
	// maxShownFrames is how many frames of one recording the page gets.
	maxShownFrames = 5000
)

// recordingsDir is where the project's recordings are (the CLI's default --dir).
func (p *project) recordingsDir() string {
	return filepath.Join(p.dir, ".mcpspec", "recordings")
}

// listRecordings is GET /api/recordings: `mcpspec record list --json` of the project's
// recordings directory, run in this process as the other runs are.
func (s *Server) listRecordings(w http.ResponseWriter, r *http.Request) {
	if s.o.Exec == nil {
		writeError(w, http.StatusNotImplemented, "this UI cannot list recordings")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), listTimeout)
	defer cancel()
	var out, errb bytes.Buffer
	code := s.o.Exec(ctx, []string{"record", "list", "--dir", s.project.recordingsDir(), "--json"}, &out, &errb)
	if code != 0 || !json.Valid(out.Bytes()) {
		writeError(w, http.StatusInternalServerError, fmt.Sprintf("mcpspec record list: exit %d: %s", code, bytes.TrimSpace(errb.Bytes())))
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write(out.Bytes())
}

// recFrameJSON is one recorded frame as the page shows it.
type recFrameJSON struct {
	// Ms is the time from the start of the recording.
	Ms  float64 `json:"ms"`
	Dir string  `json:"dir"`
	// Data is the frame: its JSON, or the text kept for a malformed or cut frame.
	Data      string `json:"data"`
	Truncated bool   `json:"truncated,omitempty"`
	Size      int    `json:"size,omitempty"`
	Status    int    `json:"httpStatus,omitempty"`
}

// recordingView is GET /api/recordings/{name}.
type recordingView struct {
	Name   string           `json:"name"`
	Header recording.Header `json:"header"`
	Frames []recFrameJSON   `json:"frames"`
	// Total is the number of frames in the file; Frames holds at most [maxShownFrames].
	Total int `json:"total"`
}

// openRecording is GET /api/recordings/{name}: the recording's frames with their timing and
// direction (the page renders them as text: a server chose what they say).
func (s *Server) openRecording(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if !recording.ValidName(name) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("recording name %q is not a plain name", name))
		return
	}
	rec, err := recording.ReadFile(filepath.Join(s.project.recordingsDir(), name+recording.Ext), 0)
	if err != nil {
		writeError(w, http.StatusNotFound, err.Error())
		return
	}
	v := recordingView{Name: name, Header: rec.Header, Total: len(rec.Entries), Frames: []recFrameJSON{}}
	for i := range rec.Entries {
		if i == maxShownFrames {
			break
		}
		e := &rec.Entries[i]
		f := recFrameJSON{Ms: e.Offset, Dir: string(e.Dir), Data: string(e.Frame), Truncated: e.Truncated, Size: e.Size}
		if len(e.Frame) == 0 {
			f.Data = e.Text
		}
		if e.HTTP != nil {
			f.Status = e.HTTP.Status
		}
		v.Frames = append(v.Frames, f)
	}
	writeJSON(w, http.StatusOK, v)
}
