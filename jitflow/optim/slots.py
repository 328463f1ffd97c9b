"""SlotTable: each Variable's optimizer state (its slots), found again after pickling.

A Variable finds its slots by identity. Pickled (or deep-copied) together with its model,
an optimizer finds the model's Variables themselves, as pickle keeps shared objects
shared. Pickled apart from its model, the Variables it unpickles are copies nothing else
holds: the table keeps only weak references to the Variables it unpickles, so those go
away and leave their slots behind under their name; the first Variable of that name
(with the same shape and dtype) the optimizer updates takes them, and training
continues where it stopped.
"""
import weakref

from ..errors import at_user_line


class _Entry:
    """A Variable's slots, and `owner()`: the Variable, or None once it is gone."""
    __slots__ = ("owner", "name", "slots")

    def __init__(self, owner, name, slots):
        self.owner, self.name, self.slots = owner, name, slots


class SlotTable:
    def __init__(self, owner_name):
        self.owner_name = owner_name  # the optimizer's name, for errors
        # id(Variable) -> _Entry; an entry left behind is under its own id
        self._entries = {}

    def slots_for(self, variable, make, slot_type=None):
        """`variable`'s slots: its own, or those a Variable of its name left behind, or
        new ones from `make()`. Slots have `slot_type` (shape, dtype): the Variable's,
        unless given."""
        entry = self._entries.get(id(variable))
        if entry is not None and entry.owner() is variable:
            return entry.slots
        if entry is not None:  # a Variable that is gone had this id: its slots stay
            self._entries[id(entry)] = self._entries.pop(id(variable))
        slots = self._claim_left_behind(variable, slot_type or (variable.shape,
                                                                 variable.dtype))
        if slots is None:
            slots = make()
        self._entries[id(variable)] = _Entry(lambda: variable, variable.name, slots)
        return slots

    def existing(self, variable):
        """`variable`'s slots if a step made them, else {} (nothing is made)."""
        entry = self._entries.get(id(variable))
        return entry.slots if entry is not None and entry.owner() is variable else {}

    def leave(self, name, slots):
        """Slots read back from a file, for the Variable named `name`: the first such
        Variable a step updates takes them (as after unpickling)."""
        entry = _Entry(_gone, name, slots)
        self._entries[id(entry)] = entry

    def all_slots(self):
        return [slot for entry in self._entries.values() for slot in entry.slots.values()]

    def _claim_left_behind(self, variable, slot_type):
        left = [(key, entry) for key, entry in self._entries.items()
                if entry.owner() is None and entry.name == variable.name]
        if not left:
            return None
        if len(left) > 1:
            raise ValueError(at_user_line(
                f"{self.owner_name}: {len(left)} sets of slots were left behind by "
                f"Variables named {variable.name!r}; give the model's Variables distinct "
                f"names, or pickle the optimizer together with its model"))
        key, entry = left[0]
        for name, slot in entry.slots.items():
            if (slot.shape, slot.dtype) != slot_type:
                raise ValueError(at_user_line(
                    f"{self.owner_name}: the slot {name!r} left behind by a Variable named "
                    f"{variable.name!r} has shape {slot.shape} and dtype {slot.dtype}, but "
                    f"the Variable updated now (shape {variable.shape}, dtype "
                    f"{variable.dtype}) needs shape {slot_type[0]} and dtype "
                    f"{slot_type[1]}"))
        del self._entries[key]
        return entry.slots

    # --- pickling ---------------------------------------------------------------------------
    def __getstate__(self):
        return {"owner_name": self.owner_name,
                "entries": [(entry.owner(), entry.name, entry.slots)
                            for entry in self._entries.values()]}

    def __setstate__(self, state):
        self.owner_name = state["owner_name"]
        self._entries = {}
        for variable, name, slots in state["entries"]:
            entry = _Entry(weakref.ref(variable) if variable is not None else _gone, name,
                           slots)
            self._entries[id(variable) if variable is not None else id(entry)] = entry


def _gone():
    return None
