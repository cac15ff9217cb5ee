def tally(words):
    counts = {}
    for word in words:
        counts[word] = counts.get(word, 0) + 1
    return counts
