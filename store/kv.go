package store

import (
	"context"
	"fmt"
)

// GetKV returns the value stored under key, or prsm.ErrNotFound.
func GetKV(ctx context.Context, q Querier, key string) ([]byte, error) {
	var v []byte
	if err := q.QueryRowContext(ctx, "SELECT value FROM kv WHERE key = ?", key).Scan(&v); err != nil {
		return nil, fmt.Errorf("get kv %s: %w", key, mapErr(err))
	}
	if v == nil {
		v = []byte{}
	}
	return v, nil
}

// PutKV stores value under key, replacing what was there.
func PutKV(ctx context.Context, q Querier, key string, value []byte) error {
	if value == nil {
		value = []byte{}
	}
	_, err := q.ExecContext(ctx, `INSERT INTO kv (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	if err != nil {
		return fmt.Errorf("put kv %s: %w", key, mapErr(err))
	}
	return nil
}
