import type { ProfileOptions, Tag } from '@api';

/**
 * Upload options: one editor for an upload profile, the account's upload defaults and the Upload
 * page's options for its next files. An unset option inherits from the layer below (contract §4:
 * built-in defaults, the account's defaults, the profile, then the upload's own fields).
 */

const expirationLabels = { DISABLED: 'Never', HOUR: 'After an hour', DAY: 'After a day', WEEK: 'After a week', MONTH: 'After 30 days' } as const;

export type ExpiryAction = NonNullable<ProfileOptions['expiryAction']>;

export function describeOptions(options: ProfileOptions, tags: Tag[]): string {
  const parts = optionParts(options, tags);
  return parts.length ? parts.join(' · ') : 'Inherits every option';
}

/** The options set, in words; nothing for options left to inherit. */
export function optionParts(options: ProfileOptions, tags: Tag[]): string[] {
  const parts: string[] = [];
  if (options.visibility) parts.push(options.visibility === 'PUBLIC' ? 'public' : 'private');
  if (options.expiration && options.expiration !== 'DISABLED') parts.push(`expires ${expirationLabels[options.expiration].toLowerCase()}${options.expiryAction === 'SET_PRIVATE' ? ' (then private)' : ''}`);
  if (options.expiration === 'DISABLED') parts.push('never expires');
  if (!options.expiration && options.expiryAction) parts.push(options.expiryAction === 'SET_PRIVATE' ? 'made private when it expires' : 'deleted when it expires');
  if (options.randomizeFileUrls !== undefined) parts.push(options.randomizeFileUrls ? 'random names' : 'original names');
  if (options.shareStyle) parts.push(`${options.shareStyle} share page`);
  if (options.tagIds?.length) parts.push(`tags: ${options.tagIds.map((id) => tags.find((t) => t.id === id)?.name ?? '?').join(', ')}`);
  return parts;
}

export function OptionsEditor({
  value,
  onChange,
  tags,
  inheritLabel = 'Inherit',
  tagsLegend = 'Tags for new uploads',
  showVisibility = true,
  actions = ['DELETE', 'SET_PRIVATE'],
}: {
  value: ProfileOptions;
  onChange: (value: ProfileOptions) => void;
  tags: Tag[];
  /** The word for "not set here". */
  inheritLabel?: string;
  tagsLegend?: string;
  /** False where the options cannot make a file public (without files.share every upload is private). */
  showVisibility?: boolean;
  /** The expiry actions offered: each needs its permission on an upload (spec, POST /api/files rule 2). */
  actions?: readonly ExpiryAction[];
}) {
  const set = <K extends keyof ProfileOptions>(key: K, raw: string, parse: (raw: string) => ProfileOptions[K]) => {
    const next = { ...value };
    if (raw === '') delete next[key];
    else next[key] = parse(raw);
    onChange(next);
  };
  return (
    <div className="options-grid">
      {showVisibility && (
        <label>
          Visibility
          <select value={value.visibility ?? ''} onChange={(e) => set('visibility', e.target.value, (v) => v as ProfileOptions['visibility'])}>
            <option value="">{inheritLabel}</option>
            <option value="PUBLIC">Public</option>
            <option value="PRIVATE">Private</option>
          </select>
        </label>
      )}
      {/* No expiry can be asked for without an action allowed to apply at its end. */}
      {actions.length > 0 && (
        <label>
          Expiration
          <select value={value.expiration ?? ''} onChange={(e) => set('expiration', e.target.value, (v) => v as ProfileOptions['expiration'])}>
            <option value="">{inheritLabel}</option>
            {Object.entries(expirationLabels).map(([key, label]) => (
              <option key={key} value={key}>
                {label}
              </option>
            ))}
          </select>
        </label>
      )}
      {actions.length > 0 && (
        <label>
          When it expires
          <select value={value.expiryAction ?? ''} onChange={(e) => set('expiryAction', e.target.value, (v) => v as ProfileOptions['expiryAction'])}>
            <option value="">{inheritLabel}</option>
            {actions.includes('DELETE') && <option value="DELETE">Delete the file</option>}
            {actions.includes('SET_PRIVATE') && <option value="SET_PRIVATE">Make it private</option>}
          </select>
        </label>
      )}
      <label>
        File names in links
        <select value={value.randomizeFileUrls === undefined ? '' : value.randomizeFileUrls ? 'yes' : 'no'} onChange={(e) => set('randomizeFileUrls', e.target.value, (v) => v === 'yes')}>
          <option value="">{inheritLabel}</option>
          <option value="no">Original names</option>
          <option value="yes">Random names</option>
        </select>
      </label>
      <label>
        Share page style
        <select value={value.shareStyle ?? ''} onChange={(e) => set('shareStyle', e.target.value, (v) => v as ProfileOptions['shareStyle'])}>
          <option value="">{inheritLabel}</option>
          <option value="minimal">Minimal</option>
          <option value="framed">Framed</option>
          <option value="delivery">Delivery</option>
        </select>
      </label>
      {tags.length > 0 && (
        <fieldset className="span-all">
          <legend>{tagsLegend}</legend>
          <div className="checkbox-grid">
            {tags.map((tag) => (
              <label key={tag.id} className="checkbox">
                <input
                  type="checkbox"
                  checked={value.tagIds?.includes(tag.id) ?? false}
                  onChange={(e) => {
                    const ids = new Set(value.tagIds ?? []);
                    if (e.target.checked) ids.add(tag.id);
                    else ids.delete(tag.id);
                    const next: ProfileOptions = { ...value, tagIds: [...ids] };
                    if (ids.size === 0) delete next.tagIds;
                    onChange(next);
                  }}
                />
                {tag.name}
              </label>
            ))}
          </div>
        </fieldset>
      )}
    </div>
  );
}
