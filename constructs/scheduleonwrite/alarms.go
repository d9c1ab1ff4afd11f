package scheduleonwrite

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"

	"github.com/unschedule/unschedule/constructs/internal/alarms"
)

// AddAlarmAction sends the alarm's state changes to topic (no-op for nil).
func AddAlarmAction(a awscloudwatch.Alarm, topic awssns.ITopic) { alarms.AddActions(a, topic) }
