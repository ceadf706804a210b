package pacer_test

import (
	"fmt"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/pacer"
)

func ExampleConstant() {
	p := pacer.Constant{PerSecond: 400, Duration: 6 * time.Second}
	for n := uint64(0); n < 3; n++ {
		at, _ := p.Due(n)
		fmt.Println(at)
	}
	wait, stop := pacer.Pace(p, time.Millisecond, 1)
	fmt.Println(wait, stop)
	// Output:
	// 0s
	// 2.5ms
	// 5ms
	// 1.5ms false
}
