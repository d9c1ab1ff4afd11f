//go:build floor_cognitoidentityprovider

package main

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"
)

func init() {
	services["cognitoidentityprovider"] = func(cfg aws.Config) any { return cognitoidentityprovider.NewFromConfig(cfg) }
}
