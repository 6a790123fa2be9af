// Tables of the CIR store. `signals_fts` is an external-content FTS5 index
// over signal bodies, kept in step by triggers.

export const CIR_SCHEMA = `
CREATE TABLE IF NOT EXISTS signals (
  rowid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  scope TEXT NOT NULL,
  type TEXT NOT NULL,
  body TEXT NOT NULL,
  domain TEXT,
  confidence REAL,
  source TEXT,
  created_at TEXT NOT NULL,
  tags TEXT
);
CREATE INDEX IF NOT EXISTS signals_scope_created ON signals (scope, created_at);
CREATE INDEX IF NOT EXISTS signals_scope_type ON signals (scope, type, created_at);
CREATE VIRTUAL TABLE IF NOT EXISTS signals_fts USING fts5 (body, content='signals', content_rowid='rowid', tokenize='unicode61');
CREATE TRIGGER IF NOT EXISTS signals_ai AFTER INSERT ON signals BEGIN
  INSERT INTO signals_fts (rowid, body) VALUES (new.rowid, new.body);
END;
CREATE TRIGGER IF NOT EXISTS signals_ad AFTER DELETE ON signals BEGIN
  INSERT INTO signals_fts (signals_fts, rowid, body) VALUES ('delete', old.rowid, old.body);
END;
CREATE TABLE IF NOT EXISTS relations (
  from_id TEXT NOT NULL REFERENCES signals (id) ON DELETE CASCADE,
  to_id TEXT NOT NULL REFERENCES signals (id) ON DELETE CASCADE,
  kind TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (from_id, to_id, kind)
);
CREATE INDEX IF NOT EXISTS relations_to ON relations (to_id);
CREATE TABLE IF NOT EXISTS embeddings (
  signal_id TEXT PRIMARY KEY REFERENCES signals (id) ON DELETE CASCADE,
  model TEXT NOT NULL,
  vector BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS patterns (
  id TEXT PRIMARY KEY,
  scope TEXT NOT NULL,
  type TEXT NOT NULL,
  body TEXT NOT NULL,
  recurrence_count INTEGER NOT NULL,
  strength REAL NOT NULL,
  signal_ids TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS patterns_scope ON patterns (scope, strength);
`;
