package awssns

import (
	"strconv"

	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/todo/todoenv"
)

// TopicArnsFromEnv lists the shard topics, in shard order, from the
// variables the notifications construct sets: TOPIC_ARN_PREFIX (the ARN of
// shard i is the prefix followed by i) and TOPIC_SHARDS. Topic names are
// deterministic, so thousands of shards fit in two short variables.
func TopicArnsFromEnv(e *lambdaenv.Env) []string {
	prefix := e.Require(todoenv.TopicArnPrefix)
	n := e.Int(todoenv.TopicShards, 1, 1, 100000)
	arns := make([]string, n)
	for i := range arns {
		arns[i] = prefix + strconv.Itoa(i)
	}
	return arns
}
