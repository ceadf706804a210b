package resources_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/resources"
)

// Watch this process for a moment, sampling every 50ms on a goroutine of its own.
func ExampleWatch() {
	s, err := resources.ProcessTree(os.Getpid())
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Millisecond)
	defer cancel()
	var peak uint64
	r := resources.Watch(ctx, s, 50*time.Millisecond, func(x resources.Sample) { peak = max(peak, x.RSSBytes) })
	fmt.Println(r.Samples > 0, r.Failures, peak > 0)
	// Output: true 0 true
}
