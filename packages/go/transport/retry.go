package transport

// When a request is sent again: Retry-After, exponential backoff with jitter, a cap. The rules are
// the TypeScript client's (packages/client/src/middleware/retry.ts) and the Python client's
// (_retry.py), with the same defaults: an idempotent request (RFC 9110 §9.2.2) answered 429 (RFC
// 6585 §4) or 5xx but 501 and 505 (which cannot succeed later, RFC 9110 §15.6.2, §15.6.6), or whose
// connection failed, is sent again up to Retries times. Any request whose connection could not even
// be opened (it never left) is sent again too, whatever its method. The wait is the Retry-After
// delay (RFC 9110 §10.2.3) when the answer has one, else d/2 + random·d/2 with
// d = min(MaxDelay, BaseDelay·2^n). A Retry-After longer than MaxDelay ends the retries: the answer
// is returned at once.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Defaults of the retry policy, as in the TypeScript and Python clients.
const (
	DefaultRetries   = 2
	DefaultBaseDelay = 300 * time.Millisecond
	DefaultMaxDelay  = 10 * time.Second
)

// RetryInfo is what WithOnRetry hooks are told about a retry about to be made. It holds no request
// (the request carries the Authorization header).
type RetryInfo struct {
	// Attempt is the number of the attempt about to be sent: 2 for the first retry.
	Attempt int
	// Status is the status being retried (429 or 5xx), 0 when the previous attempt got no answer.
	Status int
	// Err is the failure being retried (code NETWORK_ERROR), nil when there was an answer.
	Err error
	// Delay is the wait before the attempt is sent (the Retry-After delay or the jittered backoff).
	Delay time.Duration
	// Method and Path (without the query) of the request.
	Method, Path string
}

// Option sets an optional behaviour of New and Retry.
type Option func(*options)

type options struct {
	retries             int
	baseDelay, maxDelay time.Duration
	random              func() float64
	now                 func() time.Time
	sleep               func(ctx context.Context, d time.Duration) error
	onRetry             []func(RetryInfo)
	logger              *slog.Logger
}

// WithRetries sets how many times a request is sent again after the first attempt (default 2; 0
// turns retries off).
func WithRetries(n int) Option { return func(o *options) { o.retries = n } }

// WithBaseDelay sets the backoff before the first retry; it doubles on each retry (default 300 ms).
func WithBaseDelay(d time.Duration) Option { return func(o *options) { o.baseDelay = d } }

// WithMaxDelay caps every wait (default 10 s). A Retry-After longer than this ends the retries.
func WithMaxDelay(d time.Duration) Option { return func(o *options) { o.maxDelay = d } }

// WithRandom sets the source of the jitter, a number in [0, 1) (tests inject one).
func WithRandom(random func() float64) Option { return func(o *options) { o.random = random } }

// WithClock sets the clock that reads a Retry-After date (default time.Now).
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// WithSleep sets how a wait is made (tests inject one that records it); it returns ctx.Err() when the
// request's context ends first. Default: a timer that ends early with the context.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(o *options) { o.sleep = sleep }
}

// WithOnRetry adds a hook called before each retry is waited for (metrics, say).
func WithOnRetry(f func(RetryInfo)) Option {
	return func(o *options) { o.onRetry = append(o.onRetry, f) }
}

// WithLogger sets the log/slog logger of the retry lines (Retry) and of every attempt (New). No line
// holds a token, code, verifier or state.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

func sleepDefault(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func build(opts []Option) (options, error) {
	o := options{retries: DefaultRetries, baseDelay: DefaultBaseDelay, maxDelay: DefaultMaxDelay,
		random: rand.Float64, now: time.Now, sleep: sleepDefault}
	for i, opt := range opts {
		if opt == nil {
			return o, invalidOption("options", fmt.Sprintf("option %d is nil", i+1))
		}
		opt(&o)
	}
	switch {
	case o.retries < 0:
		return o, invalidOption("WithRetries", "give 0 or more")
	case o.baseDelay <= 0:
		return o, invalidOption("WithBaseDelay", "give a positive duration")
	case o.maxDelay <= 0:
		return o, invalidOption("WithMaxDelay", "give a positive duration")
	case o.random == nil || o.now == nil || o.sleep == nil:
		return o, invalidOption("options", "a function option must not be nil")
	}
	if o.logger == nil {
		o.logger = slog.New(slog.DiscardHandler)
	}
	return o, nil
}

// Retry returns next (nil: http.DefaultTransport) wrapped in the retry policy. Put it outermost, so
// that each retry goes through the layers below it (the token manager's Transport gives each a
// current token). A request whose body cannot be read again (Body set, GetBody nil) is never sent
// again. Every failure of a request that got no answer comes back as an *Error (NETWORK_ERROR,
// TIMEOUT, ABORTED); the last response comes back as it is, whatever its status.
// Errors: INVALID_OPTIONS. See RFC 9110 §10.2.3, §9.2.2; RFC 6585 §4.
//
//	rt, err := transport.Retry(manager.Transport(nil), transport.WithRetries(3))
//	client := &http.Client{Transport: rt}
func Retry(next http.RoundTripper, opts ...Option) (http.RoundTripper, error) {
	o, err := build(opts)
	if err != nil {
		return nil, err
	}
	if next == nil {
		next = http.DefaultTransport
	}
	return &retrying{o: o, next: next}, nil
}

type retrying struct {
	o    options
	next http.RoundTripper
}

type attemptKey struct{}

// attemptOf is the attempt number Retry put in the request's context (1 without Retry).
func attemptOf(ctx context.Context) int {
	if n, ok := ctx.Value(attemptKey{}).(int); ok {
		return n
	}
	return 1
}

func (r *retrying) RoundTrip(request *http.Request) (*http.Response, error) {
	ctx := request.Context()
	method, path := request.Method, request.URL.Path
	replayable := request.Body == nil || request.Body == http.NoBody || request.GetBody != nil
	for attempt := 1; ; attempt++ {
		sent := request
		if attempt > 1 {
			sent = request.Clone(context.WithValue(ctx, attemptKey{}, attempt))
			if request.GetBody != nil {
				body, err := request.GetBody()
				if err != nil {
					return nil, failure(method, path, attempt, err, []string{bearerOf(request)})
				}
				sent.Body = body
			}
		}
		response, err := r.next.RoundTrip(sent)
		if err != nil && isKitError(err) {
			return nil, err // the token manager's (or an inner layer's) own error: no connection failed
		}
		if err == nil && !retryableStatus(response.StatusCode) {
			return response, nil
		}
		delay, retry := r.delay(request, response, err, attempt)
		if !retry || !replayable {
			if err != nil {
				return nil, failure(method, path, attempt, err, []string{bearerOf(request)})
			}
			return response, nil
		}
		info := RetryInfo{Attempt: attempt + 1, Delay: delay, Method: method, Path: path}
		why := "no answer"
		if err != nil {
			info.Err = failure(method, path, attempt, err, []string{bearerOf(request)})
		} else {
			info.Status, why = response.StatusCode, strconv.Itoa(response.StatusCode)
		}
		r.o.logger.LogAttrs(ctx, slog.LevelWarn, method+" "+path+" "+why+": retry in "+delay.Round(time.Millisecond).String(),
			slog.String("method", method), slog.String("path", path), slog.Int("status", info.Status),
			slog.Int64("delay_ms", delay.Milliseconds()), slog.Int("attempt", attempt+1))
		for _, hook := range r.o.onRetry {
			hook(info)
		}
		if wait := r.o.sleep(ctx, delay); wait != nil {
			if err != nil {
				return nil, failure(method, path, attempt, wait, []string{bearerOf(request)})
			}
			return response, nil // the context ended: the last answer, as it is
		}
		if response != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(response.Body, 64<<10)) // lets the connection be reused
			_ = response.Body.Close()
		}
	}
}

// delay is the wait before the next attempt after this one's outcome, and whether there is one.
func (r *retrying) delay(request *http.Request, response *http.Response, err error, attempt int) (time.Duration, bool) {
	if attempt > r.o.retries {
		return 0, false
	}
	if err != nil {
		if ctxErr := request.Context().Err(); ctxErr != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return 0, false // a cancel or a deadline was asked for
		}
		if !idempotent(request.Method) && !neverLeft(err) {
			return 0, false
		}
	} else if !idempotent(request.Method) {
		return 0, false
	}
	if response != nil {
		if asked, ok := ParseRetryAfter(response.Header.Get("Retry-After"), r.o.now()); ok {
			return asked, asked <= r.o.maxDelay
		}
	}
	backoff := min(float64(r.o.maxDelay), float64(r.o.baseDelay)*math.Pow(2, float64(attempt-1)))
	return time.Duration(backoff/2 + r.o.random()*backoff/2), true
}

// idempotent: methods safe to send again (RFC 9110 §9.2.2). POST and PATCH are not.
func idempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// retryableStatus: 429, and 5xx but 501 and 505 (RFC 9110 §15.6.2, §15.6.6).
func retryableStatus(status int) bool {
	if status == http.StatusNotImplemented || status == http.StatusHTTPVersionNotSupported {
		return false
	}
	return status == http.StatusTooManyRequests || (status >= 500 && status <= 599)
}

// neverLeft: no connection could be opened (dial or DNS failure), so the server saw nothing.
func neverLeft(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

// ParseRetryAfter reads a Retry-After value as a delay from now: delay-seconds (digits only) or an
// HTTP-date (every form starts with a day name); a date in the past gives 0. ok is false for
// anything else (empty, negative, "5s"). See RFC 9110 §10.2.3, §5.6.7.
//
//	d, ok := transport.ParseRetryAfter("120", time.Now()) // 2m0s, true
func ParseRetryAfter(value string, now time.Time) (time.Duration, bool) {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0, false
	}
	if strings.Trim(value, "0123456789") == "" {
		seconds, err := strconv.ParseInt(value, 10, 64)
		if err != nil || seconds > math.MaxInt64/int64(time.Second) {
			return time.Duration(math.MaxInt64), true // more than anyone waits: ends the retries
		}
		return time.Duration(seconds) * time.Second, true
	}
	at, err := http.ParseTime(value)
	if err != nil {
		return 0, false
	}
	return max(0, at.Sub(now)), true
}

// bearerOf is the token a request carries, for scrubbing.
func bearerOf(request *http.Request) string {
	value := request.Header.Get("Authorization")
	if len(value) > 7 && strings.EqualFold(value[:7], "bearer ") {
		return strings.TrimSpace(value[7:])
	}
	return ""
}
