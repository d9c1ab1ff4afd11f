// Command notify is the to-do app's schedule-on-write target.
package main

// replaced by the notify target
func main() {}
