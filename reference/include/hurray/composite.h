/* Composites: the one validator of composite items, and member roles.
 * docs/spec/composite.md
 *
 * The rules (member boxes, partition grid, overlay base and corrections,
 * roles, member count, depth) live here and nowhere else: stream readers and
 * writers, the file container and the Python Composite all call these. */
#ifndef HURRAY_COMPOSITE_H
#define HURRAY_COMPOSITE_H

#include <stdint.h>
#include "hurray/descriptor.h"
#include "hurray/export.h"
#include "hurray/item.h"
#include "hurray/limit.h"
#include "hurray/status.h"

HURRAY_EXTERN_C_BEGIN

/* Validates a whole item tree in composite.md § Validation order (HR-COMP-10)
 * and stops at the first failure:
 *   - a top-level item carries no member-role section (CONSTRAINT);
 *   - a tensor item is then valid;
 *   - a composite: depth <= max_composite_depth and the member total over all
 *     levels <= max_composite_members (LIMIT), item->member_count equals the
 *     head's member_count (CONSTRAINT), resolved extents for partition and
 *     overlay (CONSTRAINT); then each member in order: role (CONSTRAINT), the
 *     rule's rank / dtype (COMBINATION) / box rules, and a composite member
 *     recursively; then the partition grid (CONSTRAINT).
 * Each descriptor must already be valid on its own (hurray_descriptor_decode
 * or _validate); a NULL item, descriptor or member, or a rank above 64, is
 * ARGUMENT. `limits` NULL means the defaults (clamped to the format maxima).
 * Allocates nothing; recursion is bounded by max_composite_depth (<= 64). */
HURRAY_API HURRAY_NODISCARD int hurray_composite_validate(const struct hurray_item *item,
                                                          const struct hurray_limits *limits,
                                                          struct hurray_error *err);

/* The derived role of member `index` of composite head `head` (HR-COMP-3):
 * HURRAY_ROLE_BASE for member 0 of an overlay, HURRAY_ROLE_CORRECTION for the
 * other overlay members, 0 (no role) for partition and group members. The one
 * place roles are derived. ARGUMENT if head is NULL or not a composite head,
 * or index >= its member_count. */
HURRAY_API HURRAY_NODISCARD int hurray_composite_member_role(const struct hurray_descriptor *head,
                                                             uint32_t index, uint8_t *role,
                                                             struct hurray_error *err);

/* Adds the derived member-role section to every overlay member of the tree
 * that has none (descriptors are modified in place; a member that already
 * carries a role keeps it, so a decoded tree is never relabelled, and the
 * validator judges it). Non-overlay members are left alone. ARGUMENT on a
 * malformed tree (NULL pointers, member_count disagreeing with the head);
 * LIMIT beyond the format's depth of 64. */
HURRAY_API HURRAY_NODISCARD int hurray_composite_assign_roles(struct hurray_item *item,
                                                              struct hurray_error *err);

HURRAY_EXTERN_C_END

#endif
