package dev.once.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.once.Fingerprint;
import dev.once.Scope;
import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.EncryptingStore;
import dev.once.store.IdempotencyStore;
import dev.once.store.Keyring;
import dev.once.store.RecordId;
import dev.once.store.UnreadableRecordException;
import dev.once.tck.IdempotencyStoreContract;
import dev.once.tck.Samples;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Encryption at rest on a real PostgreSQL: the whole store contract through {@link
 * EncryptingStore}, and the rows as someone with database access sees them: no plaintext, rotation,
 * and a ciphertext moved to another row by SQL is refused.
 */
class EncryptedPostgresStoreTest extends IdempotencyStoreContract {

  static final String TABLE = Tables.unique("once_enc_pg");

  /** The in-flight listing tests' table: they see every record, so no other test writes here. */
  static final String LISTING_TABLE = Tables.unique("once_enc_pg_list");

  static final Keyring K1 = Keyring.builder().active("k1", key(1)).build();
  static final Keyring K2_K1 = Keyring.builder().active("k2", key(2)).retired("k1", key(1)).build();
  static final Keyring K2 = Keyring.builder().active("k2", key(2)).build();
  static final String SECRET_API_KEY = "sk_live_4f1c9a0b7e2d";
  static final Duration TTL = Duration.ofHours(1);
  static HikariDataSource pool;

  @BeforeAll
  static void createSchema() {
    pool = Services.postgresPool(70);
    Tables.execute(pool, "DROP TABLE IF EXISTS " + TABLE);
    PostgresStore.builder(pool).tableName(TABLE).autoCreateSchema(true).build().close();
    Tables.execute(pool, TestDatabase.POSTGRESQL.drop(LISTING_TABLE));
    PostgresStore.builder(pool).tableName(LISTING_TABLE).autoCreateSchema(true).build().close();
  }

  @AfterAll
  static void closePool() {
    if (pool != null) {
      Tables.execute(pool, TestDatabase.POSTGRESQL.drop(TABLE));
      Tables.execute(pool, TestDatabase.POSTGRESQL.drop(LISTING_TABLE));
    }
    Tables.close(pool);
  }

  @Override
  protected IdempotencyStore createStore() {
    return EncryptingStore.of(postgres(), K1);
  }

  @Override
  protected IdempotencyStore createIsolatedStore() {
    Tables.execute(pool, "DELETE FROM " + LISTING_TABLE);
    return EncryptingStore.of(PostgresStore.builder(pool).tableName(LISTING_TABLE).build(), K1);
  }

  private static PostgresStore postgres() {
    return PostgresStore.builder(pool).tableName(TABLE).build();
  }

  @Test
  void rowsHoldNeitherTheResultNorTheSecretTheScopeWasDerivedFrom() throws Exception {
    RecordId id =
        RecordId.of(Scope.of(Scope.hash(SECRET_API_KEY), "POST /payments"), Samples.newId().key());
    complete(EncryptingStore.of(postgres(), K1), id, "{\"card\":\"4242424242424242\"}");

    String rawResult = new String(column(id, "result"), StandardCharsets.ISO_8859_1);
    String rawScope = new String(column(id, "scope"), StandardCharsets.UTF_8);

    assertThat(rawResult).doesNotContain("4242").startsWith("\u00e1\u0002k1");
    assertThat(rawScope).doesNotContain(SECRET_API_KEY).startsWith(Scope.hash(SECRET_API_KEY));
    assertThat(
            new String(
                EncryptingStore.of(postgres(), K1).get(id).orElseThrow().result(),
                StandardCharsets.UTF_8))
        .contains("4242424242424242");
  }

  @Test
  void afterRotationOldRowsStillReadAndWithoutTheOldKeyTheyAreATypedError() {
    RecordId old = complete(EncryptingStore.of(postgres(), K1), Samples.newId(), "old");
    RecordId fresh = complete(EncryptingStore.of(postgres(), K2_K1), Samples.newId(), "new");

    assertThat(EncryptingStore.of(postgres(), K2_K1).get(old).orElseThrow().result())
        .asString()
        .isEqualTo("old");
    assertThat(EncryptingStore.of(postgres(), K2).get(fresh).orElseThrow().result())
        .asString()
        .isEqualTo("new");
    assertThatThrownBy(() -> EncryptingStore.of(postgres(), K2).get(old))
        .isInstanceOfSatisfying(
            UnreadableRecordException.class,
            e -> {
              assertThat(e.reason()).isEqualTo(UnreadableRecordException.Reason.KEY_MISSING);
              assertThat(e.keyId()).isEqualTo("k1");
            });
  }

  @Test
  void aCiphertextCopiedToAnotherTenantsRowBySqlIsRefused() throws Exception {
    RecordId victim =
        complete(EncryptingStore.of(postgres(), K1), Samples.newId(), "victim's receipt");
    RecordId attacker = RecordId.of(Scope.of("attacker"), victim.key());
    complete(EncryptingStore.of(postgres(), K1), attacker, "attacker's own");
    try (Connection c = pool.getConnection();
        PreparedStatement st =
            c.prepareStatement(
                "UPDATE "
                    + TABLE
                    + " SET result = (SELECT result FROM "
                    + TABLE
                    + " WHERE scope = ? AND idem_key = ?)"
                    + " WHERE scope = ? AND idem_key = ?")) {
      st.setString(1, victim.scope().value());
      st.setString(2, victim.key().value());
      st.setString(3, attacker.scope().value());
      st.setString(4, attacker.key().value());
      assertThat(st.executeUpdate()).isEqualTo(1);
    }

    assertThatThrownBy(() -> EncryptingStore.of(postgres(), K1).get(attacker))
        .isInstanceOfSatisfying(
            UnreadableRecordException.class,
            e ->
                assertThat(e.reason())
                    .isEqualTo(UnreadableRecordException.Reason.AUTHENTICATION_FAILED));
  }

  private static RecordId complete(IdempotencyStore store, RecordId id, String result) {
    Fingerprint fp = Samples.newFingerprint();
    ClaimResult.Claimed c = (ClaimResult.Claimed) store.claim(new ClaimRequest(id, fp, TTL, TTL));
    assertThat(store.complete(id, c.token(), result.getBytes(StandardCharsets.UTF_8), TTL))
        .isTrue();
    return id;
  }

  private static byte[] column(RecordId id, String column) throws Exception {
    try (Connection c = pool.getConnection();
        PreparedStatement st =
            c.prepareStatement(
                "SELECT " + column + " FROM " + TABLE + " WHERE scope = ? AND idem_key = ?")) {
      st.setString(1, id.scope().value());
      st.setString(2, id.key().value());
      try (ResultSet rs = st.executeQuery()) {
        assertThat(rs.next()).isTrue();
        return rs.getBytes(1);
      }
    }
  }

  private static byte[] key(int seed) {
    byte[] k = new byte[32];
    for (int i = 0; i < k.length; i++) {
      k[i] = (byte) (seed * 17 + i);
    }
    return k;
  }
}
