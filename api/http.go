package api

// The HTTP methods and statuses the wire contract uses, as net/http names
// them: api does without net/http, which the lean hook binary
// (cmd/prsm-hook) must not link (TestHTTPNames holds them equal).
const (
	methodGet    = "GET"
	methodPost   = "POST"
	methodPut    = "PUT"
	methodDelete = "DELETE"

	statusBadRequest            = 400
	statusUnauthorized          = 401
	statusForbidden             = 403
	statusNotFound              = 404
	statusMethodNotAllowed      = 405
	statusConflict              = 409
	statusRequestEntityTooLarge = 413
	statusInternalServerError   = 500
	statusServiceUnavailable    = 503
)
