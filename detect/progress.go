package detect

import "fmt"

// Progress is told what a detector is about to do, one short phrase per phase or probe
// ("probe 2/5: echo"), so a front end can show that a long run is alive. It is called from the
// goroutine running the detector, must return quickly, and must not call back into the run.
// A nil Progress is silent.
type Progress func(step string)

// Say tells p the formatted step; on a nil p it does nothing.
func (p Progress) Say(format string, args ...any) {
	if p != nil {
		p(fmt.Sprintf(format, args...))
	}
}
