import { useEffect, useState } from 'react';
import { MediaProgressPanel } from './MediaProgress.tsx';
import { get, patch } from '../../api.ts';
import { ErrorNote, Loading, useLoad, useSubmit, useToast } from '../../ui.tsx';
import { useSession } from '../../session.tsx';
import type { InstanceSettings } from '@api';
import { fromMiB, ONE_BYTE_IN_MIB, toMiB } from './mib.ts';

export function SettingsSection() {
  const toast = useToast();
  const { can } = useSession();
  const settings = useLoad(() => get<InstanceSettings>('/api/settings'), []);
  const [registration, setRegistration] = useState<InstanceSettings['registration']>('closed');
  const [requireVerification, setRequireVerification] = useState(false);
  const [maxUpload, setMaxUpload] = useState('');
  const [quota, setQuota] = useState('');
  const [thumbnails, setThumbnails] = useState(true);
  const [ocr, setOcr] = useState(true);
  // Saving may start a backfill: the progress below is read again after each save.
  const [saves, setSaves] = useState(0);
  useEffect(() => {
    const s = settings.data;
    if (!s) return;
    setRegistration(s.registration);
    setRequireVerification(s.requireEmailVerification);
    setMaxUpload(toMiB(s.maxUploadSizeBytes));
    setQuota(toMiB(s.defaultQuotaBytes));
    setThumbnails(s.thumbnailsEnabled);
    setOcr(s.ocrEnabled);
  }, [settings.data]);

  const { submit: save, error } = useSubmit(async () => {
    // Only what was changed is sent (the route takes a partial body): a setting left alone stays as
    // the server has it, whatever the form would make of it.
    const s = settings.data!;
    const body: Partial<InstanceSettings> = {};
    if (registration !== s.registration) body.registration = registration;
    if (requireVerification !== s.requireEmailVerification) body.requireEmailVerification = requireVerification;
    if (maxUpload !== toMiB(s.maxUploadSizeBytes)) body.maxUploadSizeBytes = fromMiB(maxUpload);
    if (quota !== toMiB(s.defaultQuotaBytes)) body.defaultQuotaBytes = fromMiB(quota || '0');
    if (thumbnails !== s.thumbnailsEnabled) body.thumbnailsEnabled = thumbnails;
    if (ocr !== s.ocrEnabled) body.ocrEnabled = ocr;
    const data = await patch<InstanceSettings>('/api/settings', body);
    settings.setData(data);
    setSaves((n) => n + 1);
    toast('Settings saved');
  });

  if (!settings.data) return settings.error ? <ErrorNote error={settings.error} /> : <Loading />;
  return (
    <form className="card stack" onSubmit={save} aria-label="Instance settings">
      <label>
        Registration
        <select value={registration} onChange={(e) => setRegistration(e.target.value as InstanceSettings['registration'])}>
          <option value="closed">Closed: administrators create accounts</option>
          <option value="invite">Invite only</option>
          <option value="open">Open: anyone can sign up</option>
        </select>
      </label>
      <label className="checkbox">
        <input type="checkbox" checked={requireVerification} onChange={(e) => setRequireVerification(e.target.checked)} />
        Require a verified email address for API tokens and uploader apps
      </label>
      <label>
        Maximum file size (MiB)
        <input type="number" min={ONE_BYTE_IN_MIB} step="any" value={maxUpload} onChange={(e) => setMaxUpload(e.target.value)} required />
      </label>
      <label>
        Default quota per account (MiB, 0 = none){' '}
        {!can('quotas.bypass') && <span className="muted">(raising or removing it needs the permission quotas.bypass)</span>}
        <input type="number" min={0} step="any" value={quota} onChange={(e) => setQuota(e.target.value)} required />
      </label>
      <fieldset>
        <legend>Thumbnails and text</legend>
        <div>
          <label className="checkbox">
            <input type="checkbox" role="switch" checked={thumbnails} onChange={(e) => setThumbnails(e.target.checked)} aria-describedby="thumbnails-hint" />
            Make thumbnails
          </label>
          <p id="thumbnails-hint" className="hint">
            Small previews of images, videos and PDFs for the file grid; turning it on makes them for existing files too, a few at a time.
          </p>
        </div>
        <div>
          <label className="checkbox">
            <input type="checkbox" role="switch" checked={ocr} onChange={(e) => setOcr(e.target.checked)} aria-describedby="ocr-hint" />
            Recognise text in images (OCR)
          </label>
          <p id="ocr-hint" className="hint">
            Reads the words in images so that search finds them; slow and heavy on the processor, it runs in the background.
          </p>
        </div>
        <MediaProgressPanel reloadKey={saves} />
      </fieldset>
      <ErrorNote error={error} />
      <div>
        <button type="submit" className="primary">
          Save settings
        </button>
      </div>
    </form>
  );
}
