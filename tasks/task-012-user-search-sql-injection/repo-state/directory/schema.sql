CREATE TABLE users (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    email TEXT NOT NULL,
    created TEXT NOT NULL
);
CREATE TABLE api_tokens (
    user_id INTEGER NOT NULL,
    token TEXT NOT NULL
);
