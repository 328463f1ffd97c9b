"""A stack each thread has its own of: what one thread is tracing is none of another's.

Two threads may trace at once (two functions, or two signatures of one); each builder
and scope stack must then be the thread's own, or one trace would record into the other.
"""
import threading


class PerThreadStack(threading.local):
    """The list operations the tracing stacks use, on this thread's own list."""

    def __init__(self):
        self.items = []

    def append(self, item):
        self.items.append(item)

    def pop(self):
        return self.items.pop()

    def remove(self, item):
        self.items.remove(item)

    def index(self, item):
        return self.items.index(item)

    def __contains__(self, item):
        return item in self.items

    def __getitem__(self, index):
        return self.items[index]

    def __len__(self):
        return len(self.items)

    def __reversed__(self):
        return reversed(self.items)
