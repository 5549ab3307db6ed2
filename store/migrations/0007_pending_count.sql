-- 0007: each session's number of pending records, kept by triggers, so
-- that looking a session up (every tool call announces its session) costs
-- the same after ten records or a hundred thousand, instead of a count of
-- them every time.
ALTER TABLE sessions ADD COLUMN pending_count INTEGER NOT NULL DEFAULT 0;

UPDATE sessions SET pending_count =
	(SELECT COUNT(*) FROM records r WHERE r.session_id = sessions.id AND r.status = 'pending');

CREATE TRIGGER records_pending_insert AFTER INSERT ON records
	WHEN NEW.status = 'pending'
BEGIN
	UPDATE sessions SET pending_count = pending_count + 1 WHERE id = NEW.session_id;
END;

CREATE TRIGGER records_pending_delete AFTER DELETE ON records
	WHEN OLD.status = 'pending'
BEGIN
	UPDATE sessions SET pending_count = pending_count - 1 WHERE id = OLD.session_id;
END;

CREATE TRIGGER records_pending_update AFTER UPDATE OF status, session_id ON records
	WHEN (OLD.status = 'pending') != (NEW.status = 'pending') OR OLD.session_id != NEW.session_id
BEGIN
	UPDATE sessions SET pending_count = pending_count - 1 WHERE id = OLD.session_id AND OLD.status = 'pending';
	UPDATE sessions SET pending_count = pending_count + 1 WHERE id = NEW.session_id AND NEW.status = 'pending';
END;
