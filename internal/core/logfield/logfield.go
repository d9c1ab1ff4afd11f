// Package logfield names the fields of the functions' JSON log lines that
// tools query, once: every line about an item carries its key in Key
// (contract.Key.String()), so one CloudWatch Logs Insights filter finds
// an item's history across the functions (unschedule why --logs). A line
// about a whole campaign carries its campaign item's key
// (C#<campaign>/META), which that query adds for the campaign's send tasks.
// Never personal data: a send task is named by its table key, not its
// recipient's address.
package logfield

// Key is the field of an item's key: "partition/sort", or "partition"
// for a table without a sort key.
const Key = "key"
