// Package logfield names the fields of the functions' JSON log lines that
// tools query, once: every line about an item carries its key in Key
// (contract.Key.String()), so one CloudWatch Logs Insights filter finds
// an item's history across the functions (unschedule why --logs). A line
// about a group of items carries the key of the group's own item (an
// adopter's campaign: its campaign item's), which that query may add to
// its members'. Never personal data: an item is named by its table key.
package logfield

// Key is the field of an item's key: "partition/sort", or "partition"
// for a table without a sort key.
const Key = "key"
