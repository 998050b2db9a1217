package dev.once.store.redis;

import dev.once.store.LeaseToken;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToIntFunction;

/**
 * A batched heartbeat cut into scripts. In a Cluster one script may only touch keys of one hash slot,
 * so leases are grouped by the slot of their record key (a standalone Redis has no slots: one group).
 * A group is cut again at {@link #MAX_KEYS_PER_SCRIPT} keys, because Redis runs one script at a time:
 * a script over ten thousand keys would hold every other client of the node for tens of
 * milliseconds, one over a few hundred for about a millisecond. The scripts are then sent together,
 * so the batch still costs about one round trip.
 */
final class LeaseGroups {

  static final int MAX_KEYS_PER_SCRIPT = 500;

  /** The leases one script extends, and their record keys, in the same order. */
  record Group(List<LeaseToken> leases, List<byte[]> keys) {}

  private LeaseGroups() {}

  static List<Group> of(Collection<LeaseToken> leases, KeyLayout layout, ToIntFunction<byte[]> slotOf) {
    Map<Integer, Group> filling = new LinkedHashMap<>();
    List<Group> groups = new ArrayList<>();
    for (LeaseToken lease : leases) {
      byte[] key = layout.recordKey(lease.id());
      int slot = slotOf.applyAsInt(key);
      Group group = filling.computeIfAbsent(slot, s -> new Group(new ArrayList<>(), new ArrayList<>()));
      group.leases().add(lease);
      group.keys().add(key);
      if (group.keys().size() == MAX_KEYS_PER_SCRIPT) {
        groups.add(filling.remove(slot));
      }
    }
    groups.addAll(filling.values());
    return groups;
  }
}
