// GENERATED from spec/dist/openapi.json by packages/java/generator: do not edit by hand.
// Change the contract in spec/ and run `pnpm --filter @tenant-integration/java generate`.
package io.github.tenantintegration.api;

import java.util.Optional;

/**
 * A scope of the service: the names of the <code>tenantOAuth</code> security scheme of the
 * contract, exactly as the service description writes them.
 *
 * <p>Each scope's description is its area and its access (read, write or connect), the only meaning
 * the service description gives a scope: what an area holds is not shown.
 *
 * @see <a href="https://www.rfc-editor.org/rfc/rfc6749#section-3.3">RFC 6749 §3.3</a>
 */
public enum Scope {
    /** <code>profile:read</code>: profile area: read. */
    PROFILE_READ("profile:read", "profile area: read"),

    /** <code>users:read</code>: users area: read. */
    USERS_READ("users:read", "users area: read"),

    /** <code>users:write</code>: users area: write. */
    USERS_WRITE("users:write", "users area: write"),

    /** <code>contacts:read</code>: contacts area: read. */
    CONTACTS_READ("contacts:read", "contacts area: read"),

    /** <code>contacts:write</code>: contacts area: write. */
    CONTACTS_WRITE("contacts:write", "contacts area: write"),

    /** <code>tickets:read</code>: tickets area: read. */
    TICKETS_READ("tickets:read", "tickets area: read"),

    /** <code>tickets:write</code>: tickets area: write. */
    TICKETS_WRITE("tickets:write", "tickets area: write"),

    /** <code>files:read</code>: files area: read. */
    FILES_READ("files:read", "files area: read"),

    /** <code>files:write</code>: files area: write. */
    FILES_WRITE("files:write", "files area: write"),

    /** <code>settings:read</code>: settings area: read. */
    SETTINGS_READ("settings:read", "settings area: read"),

    /** <code>settings:write</code>: settings area: write. */
    SETTINGS_WRITE("settings:write", "settings area: write"),

    /** <code>custom-fields:read</code>: custom fields area: read. */
    CUSTOM_FIELDS_READ("custom-fields:read", "custom fields area: read"),

    /** <code>custom-fields:write</code>: custom fields area: write. */
    CUSTOM_FIELDS_WRITE("custom-fields:write", "custom fields area: write"),

    /** <code>math-scripts:read</code>: math scripts area: read. */
    MATH_SCRIPTS_READ("math-scripts:read", "math scripts area: read"),

    /** <code>math-scripts:write</code>: math scripts area: write. */
    MATH_SCRIPTS_WRITE("math-scripts:write", "math scripts area: write"),

    /** <code>policy-groups:read</code>: policy groups area: read. */
    POLICY_GROUPS_READ("policy-groups:read", "policy groups area: read"),

    /** <code>policy-groups:write</code>: policy groups area: write. */
    POLICY_GROUPS_WRITE("policy-groups:write", "policy groups area: write"),

    /** <code>products:read</code>: products area: read. */
    PRODUCTS_READ("products:read", "products area: read"),

    /** <code>products:write</code>: products area: write. */
    PRODUCTS_WRITE("products:write", "products area: write"),

    /** <code>projects:read</code>: projects area: read. */
    PROJECTS_READ("projects:read", "projects area: read"),

    /** <code>devices:read</code>: devices area: read. */
    DEVICES_READ("devices:read", "devices area: read"),

    /** <code>contracts:read</code>: contracts area: read. */
    CONTRACTS_READ("contracts:read", "contracts area: read"),

    /** <code>contract-options:read</code>: contract options area: read. */
    CONTRACT_OPTIONS_READ("contract-options:read", "contract options area: read"),

    /** <code>record-types:read</code>: record types area: read. */
    RECORD_TYPES_READ("record-types:read", "record types area: read"),

    /** <code>mail-messages:read</code>: mail messages area: read. */
    MAIL_MESSAGES_READ("mail-messages:read", "mail messages area: read"),

    /** <code>mail-messages:write</code>: mail messages area: write. */
    MAIL_MESSAGES_WRITE("mail-messages:write", "mail messages area: write"),

    /** <code>ticket-filters:read</code>: ticket filters area: read. */
    TICKET_FILTERS_READ("ticket-filters:read", "ticket filters area: read"),

    /** <code>ticket-filters:write</code>: ticket filters area: write. */
    TICKET_FILTERS_WRITE("ticket-filters:write", "ticket filters area: write"),

    /** <code>providers:read</code>: providers area: read. */
    PROVIDERS_READ("providers:read", "providers area: read"),

    /** <code>providers:write</code>: providers area: write. */
    PROVIDERS_WRITE("providers:write", "providers area: write"),

    /** <code>schemas:read</code>: schemas area: read. */
    SCHEMAS_READ("schemas:read", "schemas area: read"),

    /** <code>table-layouts:read</code>: table layouts area: read. */
    TABLE_LAYOUTS_READ("table-layouts:read", "table layouts area: read"),

    /** <code>text-templates:read</code>: text templates area: read. */
    TEXT_TEMPLATES_READ("text-templates:read", "text templates area: read"),

    /** <code>text-templates:write</code>: text templates area: write. */
    TEXT_TEMPLATES_WRITE("text-templates:write", "text templates area: write"),

    /** <code>transfers:read</code>: transfers area: read. */
    TRANSFERS_READ("transfers:read", "transfers area: read"),

    /** <code>transfers:write</code>: transfers area: write. */
    TRANSFERS_WRITE("transfers:write", "transfers area: write"),

    /** <code>realtime:connect</code>: realtime area: connect. */
    REALTIME_CONNECT("realtime:connect", "realtime area: connect");

    private final String value;
    private final String description;

    Scope(String value, String description) {
        this.value = value;
        this.description = description;
    }

    /** The scope's name as the service writes it, e.g. {@code profile:read}. */
    public String value() {
        return value;
    }

    /** The scope's area and access, e.g. {@code profile area: read}. */
    public String description() {
        return description;
    }

    /** The scope's name as the service writes it (what goes into the {@code scope} parameter). */
    @Override
    public String toString() {
        return value;
    }

    /**
     * The scope named {@code value}, exactly as the service writes it.
     *
     * @param value a scope name, e.g. {@code profile:read}
     * @return the scope, or empty when the service has no scope of that name
     */
    public static Optional<Scope> find(String value) {
        for (Scope scope : values()) {
            if (scope.value.equals(value)) return Optional.of(scope);
        }
        return Optional.empty();
    }
}
