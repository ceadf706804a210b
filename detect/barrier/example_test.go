package barrier_test

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/mcpspec/mcpspec/detect/barrier"
)

// Eight goroutines wait at the barrier and start together once the last one is ready.
func Example() {
	var started atomic.Int32
	at := barrier.Go(context.Background(), 8, func(ctx context.Context, i int) {
		started.Add(1) // a request would be sent here
	})
	fmt.Println(started.Load(), "released together:", !at.IsZero())
	// Output: 8 released together: true
}
