package ops

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
)

// pagedStacks serves stacks' resources a page of 100 at a time, as
// ListStackResources does.
type pagedStacks map[string][]cfntypes.StackResourceSummary

func (p pagedStacks) ListStackResources(_ context.Context, in *cloudformation.ListStackResourcesInput, _ ...func(*cloudformation.Options)) (*cloudformation.ListStackResourcesOutput, error) {
	all, ok := p[aws.ToString(in.StackName)]
	if !ok {
		return nil, fmt.Errorf("no stack %s", aws.ToString(in.StackName))
	}
	from := 0
	if in.NextToken != nil {
		fmt.Sscan(*in.NextToken, &from)
	}
	to := min(from+100, len(all))
	out := &cloudformation.ListStackResourcesOutput{StackResourceSummaries: all[from:to]}
	if to < len(all) {
		out.NextToken = aws.String(fmt.Sprint(to))
	}
	return out, nil
}

func summary(id, kind, phys string) cfntypes.StackResourceSummary {
	return cfntypes.StackResourceSummary{LogicalResourceId: aws.String(id), ResourceType: aws.String(kind), PhysicalResourceId: aws.String(phys)}
}

// TestResourcesPagesAndNests: a stack of more than 100 resources is read
// whole (DescribeStackResources would stop at 100), nested stacks too.
func TestResourcesPagesAndNests(t *testing.T) {
	var big []cfntypes.StackResourceSummary
	for i := range 163 {
		big = append(big, summary(fmt.Sprintf("Alarm%03d", i), "AWS::CloudWatch::Alarm", fmt.Sprint(i)))
	}
	big = append(big, summary("Expiry", "AWS::Lambda::Function", "expiry-fn"), summary("Topics", "AWS::CloudFormation::Stack", "arn:nested"))
	stacks := pagedStacks{"Big": big, "arn:nested": {summary("Topic0", "AWS::SNS::Topic", "arn:topic")}}
	got, err := resources(context.Background(), stacks, "Big", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 165 || got[163].phys != "expiry-fn" || got[164].phys != "arn:topic" {
		t.Fatalf("%d resources, the last two %+v", len(got), got[len(got)-2:])
	}
}
