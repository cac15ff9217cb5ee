CREATE TABLE contacts (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    phone TEXT,
    fax TEXT,
    created TEXT NOT NULL
);
