package store

import (
	"context"
	"database/sql/driver"
	"errors"

	"modernc.org/sqlite"
)

// The store opens its connections through stmtConn, modernc's connection
// with a cache of prepared statements. modernc takes every Exec and Query
// with the SQL text (it implements ExecerContext and QueryerContext), so
// database/sql never prepares anything and sqlite parsed and planned each
// of a tool call's twenty statements again: a profile of the round trip
// put a fifth of its CPU in sqlite's parser. The store's statements are a
// small fixed set, so each connection keeps its prepared ones by text.

// maxCachedStmts bounds one connection's cache; past it, statements run
// unprepared as before (the store has far fewer distinct ones).
const maxCachedStmts = 256

// connector opens cached connections to one database (sql.OpenDB).
type connector struct {
	dsn string
	d   *sqlite.Driver
}

func (c *connector) Connect(context.Context) (driver.Conn, error) {
	conn, err := c.d.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return newStmtConn(conn)
}

func (c *connector) Driver() driver.Driver { return c.d }

// sqliteConn is what modernc's connection implements and stmtConn uses.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// cachedStmt is a prepared statement; busy while rows of it are open, when
// the same text runs unprepared (the statement cannot serve two queries).
type cachedStmt struct {
	s interface {
		driver.Stmt
		driver.StmtExecContext
		driver.StmtQueryContext
	}
	busy bool
}

// stmtConn is a connection with its prepared statements. database/sql uses
// a connection from one goroutine at a time, so it needs no lock.
type stmtConn struct {
	sqliteConn
	stmts map[string]*cachedStmt
}

func newStmtConn(c driver.Conn) (driver.Conn, error) {
	sc, ok := c.(sqliteConn)
	if !ok {
		c.Close()
		return nil, errors.New("sqlite connection lacks the interfaces the store needs")
	}
	return &stmtConn{sqliteConn: sc, stmts: map[string]*cachedStmt{}}, nil
}

// stmt returns the prepared statement of query, preparing it on first use;
// nil when it cannot be cached (busy, the cache full, or not one statement).
func (c *stmtConn) stmt(ctx context.Context, query string) (*cachedStmt, error) {
	if cs, ok := c.stmts[query]; ok {
		if cs.busy {
			return nil, nil
		}
		return cs, nil
	}
	if len(c.stmts) >= maxCachedStmts {
		return nil, nil
	}
	ds, err := c.sqliteConn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	s, ok := ds.(interface {
		driver.Stmt
		driver.StmtExecContext
		driver.StmtQueryContext
	})
	if !ok {
		ds.Close()
		return nil, nil
	}
	cs := &cachedStmt{s: s}
	c.stmts[query] = cs
	return cs, nil
}

func (c *stmtConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	cs, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if cs == nil {
		return c.sqliteConn.ExecContext(ctx, query, args)
	}
	return cs.s.ExecContext(ctx, args)
}

func (c *stmtConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	cs, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if cs == nil {
		return c.sqliteConn.QueryContext(ctx, query, args)
	}
	rows, err := cs.s.QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	cs.busy = true
	return &stmtRows{Rows: rows, cs: cs}, nil
}

// Close finalizes the connection's statements, then closes it.
func (c *stmtConn) Close() error {
	var errs []error
	for _, cs := range c.stmts {
		errs = append(errs, cs.s.Close())
	}
	c.stmts = nil
	return errors.Join(append(errs, c.sqliteConn.Close())...)
}

// stmtRows frees its statement for the next query when closed.
type stmtRows struct {
	driver.Rows
	cs *cachedStmt
}

func (r *stmtRows) Close() error {
	err := r.Rows.Close()
	r.cs.busy = false
	return err
}
