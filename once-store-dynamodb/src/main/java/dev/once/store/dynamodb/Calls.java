package dev.once.store.dynamodb;

import dev.once.store.RecordId;
import dev.once.store.StoreUnavailableException;
import java.time.Duration;
import java.util.Map;
import java.util.function.Supplier;
import software.amazon.awssdk.awscore.AwsRequestOverrideConfiguration;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;

/**
 * Runs the store's DynamoDB calls: each bounded by the call timeout (set on the request, retries
 * included), and each failure translated. A failed condition is an answer, not a failure; throttling,
 * server errors, timeouts and network failures mean the store is unavailable; any other rejection
 * (a missing table, a malformed request) is a configuration or programming error and says so.
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
      return call.get();
    } catch (SdkException e) {
      throw translate(operation, e);
    }
  }

  /**
   * Runs a conditional write. Returns {@code null} if it was applied; otherwise the item as it stood
   * (empty if there was none): the one DynamoDB returned with the failure, else {@code reread}'s, else
   * an empty map.
   */
  Map<String, AttributeValue> conditionally(String operation, RecordId id, Supplier<?> write,
      Supplier<Map<String, AttributeValue>> reread) {
    try {
      write.get();
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

  private RuntimeException translate(String operation, SdkException e) {
    if (e instanceof AwsServiceException service && !e.retryable() && !service.isThrottlingException()
        && service.statusCode() >= 400 && service.statusCode() < 500) {
      return new IllegalStateException("DynamoDB rejected " + operation + " on table " + table + ": " + e.getMessage(), e);
    }
    return new StoreUnavailableException("DynamoDB could not run " + operation + " on table " + table
        + " (call timeout " + timeout.toMillis() + " ms): " + e.getMessage(), e);
  }
}
