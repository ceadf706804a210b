package retrieval_test

import (
	"context"
	"fmt"

	"github.com/mcpspec/mcpspec/analyze/retrieval"
	"github.com/mcpspec/mcpspec/session"
)

func Example() {
	tools := []session.Tool{
		{Name: "get_weather", Description: "Current weather for a city."},
		{Name: "send_email", Description: "Sends an email to a recipient."},
	}
	g, err := retrieval.ParseGoldenSet([]byte(`
queries:
  - {id: w, query: is it raining in Oslo, labels: [{tool: get_weather, relevance: 2}]}
  - {id: m, query: email the report to Ann, labels: [{tool: send_email, relevance: 2}]}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := retrieval.Evaluate(context.Background(), g, retrieval.NewBM25(tools).Search, "bm25", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(retrieval.MetricsLine(r.Metrics))
	// Output: Recall@1 0.5000 · Recall@3 0.5000 · Recall@5 0.5000 · Recall@10 0.5000 · MRR 0.5000 · nDCG@10 0.5000 · MAP 0.5000
}
