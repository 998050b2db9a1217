package dev.once.store.dynamodb;

import dev.once.store.RecordId;
import dev.once.store.StoreUnavailableException;
import java.time.Duration;
import java.util.Map;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import software.amazon.awssdk.awscore.AwsRequestOverrideConfiguration;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;

/**
 * Runs the store's DynamoDB calls: each bounded by the call timeout (set on the request, retries
 * included), and each failure translated. A failed condition is an answer, not a failure;
 * throttling, server errors, timeouts and network failures mean the store is unavailable; any other
 * rejection (a missing table, a malformed request) is a configuration or programming error and says
 * so.
 *
 * <p>Calls run with the thread's interrupt flag cleared, and set again afterwards. The sync client
 * checks the flag between its stages and aborts the call when it finds it set: before the request
 * is sent, so a completion or a claim from an interrupted thread failed although nothing was wrong
 * with the store; and after the response arrived, so a write that landed was reported as failed.
 * The caller's interrupt is kept for the caller to act on once the store has answered. An interrupt
 * that arrives while the request is on the wire still aborts it inside the SDK: the store then
 * reports {@link StoreUnavailableException}, an unknown outcome, as for a timeout.
 */
final class Calls {

  private final String table;
  private final Duration timeout;
  private final AwsRequestOverrideConfiguration override;

  Calls(String table, Duration timeout) {
    this.table = table;
    this.timeout = timeout;
    this.override = AwsRequestOverrideConfiguration.builder().apiCallTimeout(timeout).build();
  }

  AwsRequestOverrideConfiguration timeout() {
    return override;
  }

  <T> T call(String operation, Supplier<T> call) {
    try {
      return uninterrupted(call);
    } catch (SdkException e) {
      throw translate(operation, e);
    }
  }

  /**
   * Runs a conditional write. Returns {@code null} if it was applied; otherwise the item as it
   * stood (empty if there was none): the one DynamoDB returned with the failure, else {@code
   * reread}'s, else an empty map.
   */
  @Nullable Map<String, AttributeValue> conditionally(
      String operation,
      @Nullable RecordId id,
      Supplier<?> write,
      @Nullable Supplier<Map<String, AttributeValue>> reread) {
    try {
      uninterrupted(write);
      return null;
    } catch (ConditionalCheckFailedException e) {
      if (e.hasItem() && !e.item().isEmpty()) {
        return e.item();
      }
      // Only where the service does not return the item (older DynamoDB Local versions).
      Map<String, AttributeValue> item = reread == null ? null : reread.get();
      return item == null ? Map.of() : item;
    } catch (SdkException e) {
      throw translate(operation + (id == null ? "" : " of " + id), e);
    }
  }

  private static <T> T uninterrupted(Supplier<T> call) {
    boolean interrupted = Thread.interrupted();
    try {
      return call.get();
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private RuntimeException translate(String operation, SdkException e) {
    if (e instanceof AwsServiceException service
        && !e.retryable()
        && !service.isThrottlingException()
        && service.statusCode() >= 400
        && service.statusCode() < 500) {
      return new IllegalStateException(
          "DynamoDB rejected " + operation + " on table " + table + ": " + e.getMessage(), e);
    }
    return new StoreUnavailableException(
        "DynamoDB could not run "
            + operation
            + " on table "
            + table
            + " (call timeout "
            + timeout.toMillis()
            + " ms): "
            + e.getMessage(),
        e);
  }
}
