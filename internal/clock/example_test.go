package clock_test

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpspec/mcpspec/internal/clock"
)

func ExampleSleep() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fmt.Println(clock.Sleep(ctx, time.Hour))
	// Output: context canceled
}
