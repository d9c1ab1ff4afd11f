// Package httpapi is what every JSON API of the module shares (the to-do
// API, the campaign API): the request a handler serves and the response
// it answers, the JSON bodies of a success and of an error, the CORS
// headers of the allowed origins, and the 5xx that hides an internal
// error from the caller. It serves no HTTP itself: the Lambda functions
// (FromAPIGateway, ServeAPIGateway) and the local dev server each
// translate their request into a Request and write back the Response.
package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
)

// Request is one API call. UserID is the authenticated caller (the
// token's sub), set by the authorizer, never read from the body.
type Request struct {
	Method string
	// Route is the API Gateway resource path, such as "/tasks/{id}".
	Route string
	// ID is the path's {id} ("" on a route without one).
	ID     string
	UserID string
	Query  map[string]string
	Body   []byte
	// Origin is the request's Origin header ("" when none).
	Origin string
	// Email is the caller's email address (the token's email claim).
	Email string
	// EmailVerified is the token's email_verified claim: true only when
	// the user pool marked the address verified.
	EmailVerified bool
	// EmailProof is the token's custom:email_proof claim: the address the
	// user last proved by a code (identity.EmailProofAttribute), "" when none.
	EmailProof string
	// Groups are the user pool groups the caller belongs to (the token's
	// cognito:groups claim).
	Groups []string
}

// InGroup reports whether the caller belongs to the user pool group.
func (r Request) InGroup(name string) bool {
	return name != "" && slices.Contains(r.Groups, name)
}

// Response is the reply: a status, a JSON body (nil for 204) and headers.
type Response struct {
	Status  int
	Body    []byte
	Headers map[string]string
}

// Headers are a JSON response's headers.
func Headers() map[string]string { return map[string]string{"Content-Type": "application/json"} }

// JSON answers status with v as its body; v is one of the API's own
// types, which always marshal (a failure answers a 500 all the same).
func JSON(status int, v any) Response {
	b, err := json.Marshal(v)
	if err != nil {
		return Error(http.StatusInternalServerError, "internal_error", "something went wrong on our side, try again")
	}
	return Response{Status: status, Body: b, Headers: Headers()}
}

// ErrorBody is the body of every error the API answers itself: a code a
// client can switch on and a message that says what to fix.
type ErrorBody struct {
	Error   string `json:"error"`
	Message string `json:"message"`
}

// Error answers status with {"error": code, "message": msg}.
func Error(status int, code, msg string) Response {
	b, _ := json.Marshal(ErrorBody{Error: code, Message: msg}) // two strings always marshal
	return Response{Status: status, Body: b, Headers: Headers()}
}

// Internal answers an error the caller did not cause without echoing it:
// a 503 "try again" for a request that ran out of time, else a 500. The
// error itself is logged, with attrs (the item's key, where the request acts on one).
func Internal(ctx context.Context, log *slog.Logger, err error, attrs ...any) Response {
	attrs = append(attrs, "error", err.Error())
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		log.ErrorContext(ctx, "request timed out", attrs...)
		return Error(http.StatusServiceUnavailable, "unavailable", "the service is busy, try again")
	}
	log.ErrorContext(ctx, "internal error", attrs...)
	return Error(http.StatusInternalServerError, "internal_error", "something went wrong on our side, try again")
}

// CORS adds the CORS headers for a request from origin: it gets its own
// origin back in Access-Control-Allow-Origin when that is one of allowed,
// and the first allowed origin otherwise, which a browser refuses for
// another site. No allowed origins: no headers.
func CORS(resp Response, allowed []string, origin string) Response {
	if len(allowed) == 0 {
		return resp
	}
	if resp.Headers == nil {
		resp.Headers = map[string]string{}
	}
	resp.Headers["Access-Control-Allow-Origin"] = allowed[0]
	if slices.Contains(allowed, origin) {
		resp.Headers["Access-Control-Allow-Origin"] = origin
	}
	resp.Headers["Vary"] = "Origin"
	return resp
}
