package scheduleonwrite

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
)

// AddAlarmAction sends the alarm's state changes to topic (no-op for nil).
func AddAlarmAction(a awscloudwatch.Alarm, topic awssns.ITopic) {
	if topic == nil {
		return
	}
	a.AddAlarmAction(awscloudwatchactions.NewSnsAction(topic))
	a.AddOkAction(awscloudwatchactions.NewSnsAction(topic))
}
