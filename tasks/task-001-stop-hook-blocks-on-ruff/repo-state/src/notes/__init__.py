from notes.store import NoteStore

__all__ = ["NoteStore"]
