package api

import (
	"net/http"
	"testing"
)

// api's own names of methods and statuses are net/http's.
func TestHTTPNames(t *testing.T) {
	for got, want := range map[string]string{methodGet: http.MethodGet, methodPost: http.MethodPost,
		methodPut: http.MethodPut, methodDelete: http.MethodDelete} {
		if got != want {
			t.Errorf("method %q, want %q", got, want)
		}
	}
	for _, c := range [][2]int{{statusBadRequest, http.StatusBadRequest}, {statusUnauthorized, http.StatusUnauthorized},
		{statusForbidden, http.StatusForbidden}, {statusNotFound, http.StatusNotFound},
		{statusMethodNotAllowed, http.StatusMethodNotAllowed}, {statusConflict, http.StatusConflict},
		{statusRequestEntityTooLarge, http.StatusRequestEntityTooLarge},
		{statusInternalServerError, http.StatusInternalServerError}, {statusServiceUnavailable, http.StatusServiceUnavailable}} {
		if c[0] != c[1] {
			t.Errorf("status %d, want %d", c[0], c[1])
		}
	}
}
