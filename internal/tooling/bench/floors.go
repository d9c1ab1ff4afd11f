package bench

import (
	"slices"
	"sort"
	"strings"
)

// FunctionClients are the AWS service clients each lambdas/* main links
// and creates (less ConfigServices): its cold init is compared with the
// floor built with the same clients, or bare for none.
// TestFunctionClientsMatchTheMains keeps this in step with the mains.
var FunctionClients = map[string][]string{
	"api":                 {"dynamodb", "scheduler", "secretsmanager", "sns"},
	"campaignapi":         {"dynamodb", "lambda", "scheduler", "secretsmanager", "sfn"},
	"campaignbounce":      {"dynamodb", "secretsmanager", "sesv2"},
	"campaignprogress":    {"dynamodb"},
	"campaignprovision":   {"cognitoidentityprovider", "dynamodb", "lambda", "scheduler", "sfn"},
	"campaignreconciler":  {"cognitoidentityprovider", "dynamodb", "lambda", "scheduler", "secretsmanager", "sesv2", "sfn"},
	"campaignsend":        {"cognitoidentityprovider", "dynamodb", "secretsmanager", "sesv2"},
	"campaignunsubscribe": {"dynamodb", "secretsmanager", "sesv2"},
	"cancelworker":        {"dynamodb", "scheduler", "sfn"},
	"deferreddispatch":    {"sqs"},
	"fire":                {"dynamodb", "lambda"},
	"futureevent":         {"dynamodb", "lambda"},
	"notify":              {"dynamodb", "sns"},
	"postauth":            {"dynamodb", "sns"},
	"postconfirmation":    {"cognitoidentityprovider"},
	"presignup":           nil,
	"reconciler":          {"dynamodb", "lambda", "scheduler", "sfn"},
	"streamprocessor":     {"dynamodb", "sqs"},
	"todofire":            {"dynamodb", "lambda", "sns"},
	"ttlwatch":            {"dynamodb"},
}

// ConfigServices are the service packages config.LoadDefaultConfig links
// for its credential providers: part of every floor.
var ConfigServices = map[string]bool{"signin": true, "sso": true, "ssooidc": true, "sts": true}

// StageFloorClients are the clients of the floor broken down by stage.
var StageFloorClients = []string{"dynamodb", "scheduler", "sns", "sqs"}

// FloorName names the floor of a client set: "floor: dynamodb+sns", or
// RefBare for none.
func FloorName(clients []string) string {
	if len(clients) == 0 {
		return RefBare
	}
	return "floor: " + strings.Join(slices.Sorted(slices.Values(clients)), "+")
}

// FloorTags are the build tags of a client set's floor.
func FloorTags(clients []string) string {
	tags := make([]string, len(clients))
	for i, c := range clients {
		tags[i] = "floor_" + c
	}
	sort.Strings(tags)
	return strings.Join(tags, ",")
}

// FunctionFloor is the floor fn's cold init is compared with (RefFloor
// for a function not in FunctionClients).
func FunctionFloor(fn string) string {
	clients, ok := FunctionClients[fn]
	if !ok {
		return RefFloor
	}
	return FloorName(clients)
}

// FloorSets lists the distinct client sets of fns by floor name, less bare.
func FloorSets(fns []string) map[string][]string {
	out := map[string][]string{}
	for _, fn := range fns {
		if c := FunctionClients[fn]; len(c) > 0 {
			out[FloorName(c)] = c
		}
	}
	return out
}
