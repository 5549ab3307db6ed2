package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/prsm-dev/prsm"
)

const feedbackCols = `id, session_id, record_id, kind, decision, path, lines, excerpt, text, author,
	created_at, state, attempts, taken_at, via, delivered_at, why`

func scanFeedback(sc scanner) (*prsm.Feedback, error) {
	var (
		f                prsm.Feedback
		created          string
		taken, delivered sql.NullString
	)
	if err := sc.Scan(&f.ID, &f.SessionID, &f.RecordID, &f.Kind, &f.Decision, &f.Path, &f.Lines, &f.Excerpt,
		&f.Text, &f.Author, &created, &f.State, &f.Attempts, &taken, &f.Via, &delivered, &f.Why); err != nil {
		return nil, err
	}
	var err error
	if f.CreatedAt, err = parseTime(created); err != nil {
		return nil, err
	}
	if f.TakenAt, err = parseNullTime(taken); err != nil {
		return nil, err
	}
	if f.DeliveredAt, err = parseNullTime(delivered); err != nil {
		return nil, err
	}
	return &f, nil
}

// AddFeedback stores f as a new item of its session's queue and sets its
// ID. State "" is queued.
func AddFeedback(ctx context.Context, q Querier, f *prsm.Feedback) error {
	if f.State == "" {
		f.State = prsm.FeedbackQueued
	}
	res, err := q.ExecContext(ctx, `INSERT INTO feedback
		(session_id, record_id, kind, decision, path, lines, excerpt, text, author, created_at, state, why)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		f.SessionID, f.RecordID, f.Kind, f.Decision, f.Path, f.Lines, f.Excerpt, f.Text, f.Author,
		formatTime(f.CreatedAt), f.State, f.Why)
	if err != nil {
		return fmt.Errorf("add feedback to session %s: %w", f.SessionID, mapErr(err))
	}
	f.ID, err = res.LastInsertId()
	return err
}

// ListFeedback returns a session's items, oldest first: those about the
// records recordIDs when any are given, else all of them.
func ListFeedback(ctx context.Context, q Querier, sessionID string, recordIDs ...string) ([]*prsm.Feedback, error) {
	query := "SELECT " + feedbackCols + " FROM feedback WHERE session_id = ?"
	args := []any{sessionID}
	if len(recordIDs) > 0 {
		query += " AND record_id IN (?" + strings.Repeat(", ?", len(recordIDs)-1) + ")"
		for _, id := range recordIDs {
			args = append(args, id)
		}
	}
	rows, err := q.QueryContext(ctx, query+" ORDER BY id", args...)
	if err != nil {
		return nil, fmt.Errorf("list feedback of session %s: %w", sessionID, mapErr(err))
	}
	return collect(rows, scanFeedback)
}

// TakeFeedback hands the session's undelivered items to an answer, oldest
// first, at most limit: the queued ones, and those handed to an answer
// before staleBefore that no confirm finalized (their answer failed, or
// the server stopped in between). Each is marked delivering, via via,
// with its attempts counted; an item handed out for the second time is
// marked delivered at once, so that none is delivered more than twice.
// Run it in a transaction.
func TakeFeedback(ctx context.Context, q Querier, sessionID, via string, now, staleBefore time.Time, limit int) ([]*prsm.Feedback, error) {
	rows, err := q.QueryContext(ctx, "SELECT "+feedbackCols+` FROM feedback
		WHERE session_id = ? AND (state = ? OR (state = ? AND taken_at < ?)) ORDER BY id LIMIT ?`,
		sessionID, prsm.FeedbackQueued, prsm.FeedbackDelivering, formatTime(staleBefore), limit)
	if err != nil {
		return nil, fmt.Errorf("take feedback of session %s: %w", sessionID, mapErr(err))
	}
	items, err := collect(rows, scanFeedback)
	if err != nil {
		return nil, err
	}
	for _, f := range items {
		f.Attempts++
		f.Via, f.TakenAt = via, &now
		f.State = prsm.FeedbackDelivering
		var delivered sql.NullString
		if f.Attempts >= 2 {
			f.State, f.DeliveredAt = prsm.FeedbackDelivered, &now
			delivered = formatNullTime(&now)
		}
		if _, err := q.ExecContext(ctx, `UPDATE feedback SET state = ?, attempts = ?, via = ?, taken_at = ?, delivered_at = ?
			WHERE id = ?`, f.State, f.Attempts, via, formatTime(now), delivered, f.ID); err != nil {
			return nil, fmt.Errorf("take feedback %d: %w", f.ID, mapErr(err))
		}
	}
	return items, nil
}

// ConfirmFeedback marks the items ids of the session, handed to an
// answer that reached the agent, delivered at now; another session's
// ids are left alone.
func ConfirmFeedback(ctx context.Context, q Querier, sessionID string, ids []int64, now time.Time) error {
	for _, id := range ids {
		if _, err := q.ExecContext(ctx, `UPDATE feedback SET state = ?, delivered_at = ? WHERE id = ? AND session_id = ? AND state = ?`,
			prsm.FeedbackDelivered, formatTime(now), id, sessionID, prsm.FeedbackDelivering); err != nil {
			return fmt.Errorf("confirm feedback %d: %w", id, mapErr(err))
		}
	}
	return nil
}

// FeedbackWaiting reports whether the session has an item to hand out:
// queued, or handed to an answer before staleBefore and never confirmed.
// It only reads.
func FeedbackWaiting(ctx context.Context, q Querier, sessionID string, staleBefore time.Time) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM feedback
		WHERE session_id = ? AND (state = ? OR (state = ? AND taken_at < ?)))`,
		sessionID, prsm.FeedbackQueued, prsm.FeedbackDelivering, formatTime(staleBefore)).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("feedback of session %s: %w", sessionID, mapErr(err))
	}
	return n == 1, nil
}
