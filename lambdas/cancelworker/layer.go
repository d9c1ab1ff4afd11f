package main

import (
	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/adapters/timers"
	"github.com/unschedule/unschedule/internal/lambdaenv"
)

// layerConfig is the timer the worker drives and the item schema.
type layerConfig struct {
	timers.Config
	Schema contract.Schema
}

// loadLayer reads the timer and only the variables that timer needs.
func loadLayer(getenv func(string) string) (layerConfig, error) {
	e := lambdaenv.New(getenv)
	t, err := timers.Load(e, getenv)
	if err != nil {
		return layerConfig{}, err
	}
	c := layerConfig{Config: t, Schema: e.Schema()}
	return c, e.Err()
}
