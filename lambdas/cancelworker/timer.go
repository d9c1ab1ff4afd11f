package main

import (
	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/adapters/timers"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
)

// timerConfig is the timer the worker drives and the item schema.
type timerConfig struct {
	timers.Config
	Schema contract.Schema
}

// loadTimer reads the timer and only the variables that timer needs.
func loadTimer(getenv func(string) string) (timerConfig, error) {
	e := lambdaenv.New(getenv)
	t, err := timers.Load(e, getenv)
	if err != nil {
		return timerConfig{}, err
	}
	c := timerConfig{Config: t, Schema: e.Schema()}
	return c, e.Err()
}
