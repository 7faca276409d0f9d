package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// HTTPTimeout bounds one decision over HTTP, connection included.
const HTTPTimeout = 10 * time.Second

// maxResponse bounds the answer read from the server: a decision is small.
const maxResponse = 16 << 20

// HTTPEngine asks an OPA-compatible server (aclc serve, stock opa run, an
// OPA sidecar) through its Data API: POST {"input": ...} to
// <url>/v1/data/<entrypoint>, answer its "result". One keep-alive client is
// shared by every call.
type HTTPEngine struct {
	base   string
	client *http.Client
}

// NewHTTP returns the engine for the server at base, e.g.
// http://127.0.0.1:8181.
func NewHTTP(base string) (*HTTPEngine, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("server url: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("server url %q: want http://host:port or https://host:port", base)
	}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: HTTPTimeout,
	}
	return &HTTPEngine{base: strings.TrimRight(base, "/"), client: &http.Client{Transport: tr, Timeout: HTTPTimeout}}, nil
}

// Name implements Engine.
func (*HTTPEngine) Name() string { return HTTP }

// ErrUndefined is returned, wrapped, when the server has no value for the
// entry point: the package is not loaded, or the rule is not defined.
var ErrUndefined = errors.New("undefined")

// Eval implements Engine. A non-200 answer, an answer without a result and a
// transport failure are errors; callers deny with Deny.
func (e *HTTPEngine) Eval(ctx context.Context, ep string, input []byte) (json.RawMessage, error) {
	if !json.Valid(input) {
		return nil, errors.New("parse input: not valid JSON")
	}
	body := make([]byte, 0, len(input)+12)
	body = append(append(append(body, `{"input":`...), input...), '}')
	u := e.base + "/v1/data/" + strings.Trim(ep, "/")
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ep, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return nil, fmt.Errorf("%s: read answer: %w", ep, err)
	}
	if len(raw) > maxResponse {
		return nil, fmt.Errorf("%s: answer larger than %d bytes", ep, maxResponse)
	}
	if resp.StatusCode != http.StatusOK {
		var oe struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		}
		if json.Unmarshal(raw, &oe) == nil && oe.Message != "" {
			return nil, fmt.Errorf("%s: server answered %s: %s: %s", ep, resp.Status, oe.Code, oe.Message)
		}
		return nil, fmt.Errorf("%s: server answered %s: %.200s", ep, resp.Status, raw)
	}
	var out struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("%s: answer is not the Data API's JSON: %w", ep, err)
	}
	if len(out.Result) == 0 {
		return nil, fmt.Errorf("%s: %w (is the bundle for it loaded at %s?)", ep, ErrUndefined, e.base)
	}
	return out.Result, nil
}

// Close implements Engine: idle connections are closed.
func (e *HTTPEngine) Close(context.Context) error {
	e.client.CloseIdleConnections()
	return nil
}
