from notes.store import NoteStore


def test_find_by_tag():
    store = NoteStore()
    store.add("a", tags=["x"])
    store.add("b", tags=["y"])
    assert [n.title for n in store.find_by_tag("x")] == ["a"]
