"""A tiny in-memory note store."""

from dataclasses import dataclass, field


@dataclass
class Note:
    title: str
    body: str = ""
    tags: list[str] = field(default_factory=list)


class NoteStore:
    def __init__(self) -> None:
        self._notes: dict[str, Note] = {}

    def add(self, title: str, body: str = "", tags: list[str] | None = None) -> Note:
        note = Note(title=title, body=body, tags=list(tags or []))
        self._notes[title] = note
        return note

    def find_by_tag(self, tag: str) -> list[Note]:
        """Notes carrying `tag`, in insertion order (the order users created them in the app)."""
        return [note for note in self._notes.values() if tag in note.tags]
