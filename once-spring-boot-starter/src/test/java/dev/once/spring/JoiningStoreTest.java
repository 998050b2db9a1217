package dev.once.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.Fingerprint;
import dev.once.IdempotencyKey;
import dev.once.Scope;
import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.Finish;
import dev.once.store.ForwardingStore;
import dev.once.store.IdempotencyStore;
import dev.once.store.InMemoryStore;
import dev.once.store.RecordId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

/**
 * The store the starter puts between the engine and a JDBC store: the plain store, batches
 * included, for every request outside a transaction; inside one, each call joined and none
 * gathered, so that the claim and the outcome commit or roll back with the request's own writes.
 */
class JoiningStoreTest {

  /** A store that batches and writes down which of its calls were made. */
  private static final class Recording extends ForwardingStore {
    final IdempotencyStore memory = InMemoryStore.create();
    final List<String> calls = new CopyOnWriteArrayList<>();

    @Override
    protected IdempotencyStore delegate() {
      return memory;
    }

    @Override
    public boolean batches() {
      return true;
    }

    @Override
    public ClaimResult claim(ClaimRequest request) {
      calls.add("claim " + request.id().key().value());
      return memory.claim(request);
    }

    @Override
    public boolean release(RecordId id, long token) {
      calls.add("release " + id.key().value());
      return memory.release(id, token);
    }

    @Override
    public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
      calls.add("claimAll " + requests.size());
      return memory.claimAll(requests);
    }

    @Override
    public List<Boolean> finishAll(List<Finish> finishes) {
      calls.add("finishAll " + finishes.size());
      return memory.finishAll(finishes);
    }
  }

  private final Recording plain = new Recording();
  private final Recording joined = new Recording();
  private final TransactionJoin join =
      new TransactionJoin(connection -> joined, new SimpleDriverDataSource());
  private final JoiningStore store = new JoiningStore(plain, join);

  @Test
  void outsideATransactionItIsThePlainStoreAndItsBatches() {
    assertThat(store.batches()).isTrue();
    assertThat(store.batchesOnThisThread()).isTrue();

    List<ClaimResult> claimed = store.claimAll(requests("a", "b"));
    assertThat(store.finishAll(releases(claimed, "a", "b"))).containsExactly(true, true);

    assertThat(plain.calls).containsExactly("claimAll 2", "finishAll 2");
    assertThat(joined.calls).isEmpty();
  }

  @Test
  void insideATransactionNothingIsGatheredAndEveryCallJoinsIt() {
    join.enter(null);
    try {
      assertThat(store.batches()).isTrue();
      assertThat(store.batchesOnThisThread()).isFalse();

      List<ClaimResult> claimed = store.claimAll(requests("a", "b"));
      assertThat(store.finishAll(releases(claimed, "a", "b"))).containsExactly(true, true);
    } finally {
      join.leave();
    }

    assertThat(joined.calls).containsExactly("claim a", "claim b", "release a", "release b");
    assertThat(plain.calls).isEmpty();
    assertThat(store.batchesOnThisThread()).isTrue();
  }

  private static List<ClaimRequest> requests(String... keys) {
    List<ClaimRequest> requests = new ArrayList<>();
    for (String key : keys) {
      requests.add(
          new ClaimRequest(
              id(key),
              new Fingerprint(1, "00".repeat(32)),
              Duration.ofSeconds(10),
              Duration.ofSeconds(10)));
    }
    return requests;
  }

  private static List<Finish> releases(List<ClaimResult> claimed, String... keys) {
    List<Finish> releases = new ArrayList<>();
    for (int i = 0; i < keys.length; i++) {
      releases.add(Finish.release(id(keys[i]), ((ClaimResult.Claimed) claimed.get(i)).token()));
    }
    return releases;
  }

  private static RecordId id(String key) {
    return RecordId.of(Scope.of("m"), IdempotencyKey.of(key));
  }
}
